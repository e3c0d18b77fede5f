/**
 * The peer's own `argo` CLI (v4.0.2, built from the Go module proxy by hack/build-peer.sh --cli,
 * cached like the control plane), unchanged, in server mode against plugflow's REST server:
 * `ARGO_SERVER=host:port ARGO_HTTP1=true ARGO_SECURE=true ARGO_INSECURE_SKIP_VERIFY=true
 * ARGO_TOKEN="Bearer …"`, with workflows written for the peer (`argoproj.io/v1alpha1`, its label
 * keys). A controller, the local pod runner and the archive run beside it (test/support/e2e.ts).
 * Each command is run as a user would, and what it printed or changed is checked.
 */
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../src/devenv/dev-stack.js';
import { cluster } from './support/cluster.js';
import { startE2eStack, type E2eStack } from './support/e2e.js';
import { startTestServer } from './support/server.js';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** The CLI's path (built once, then reused from the cache). */
function argoBinary(): string {
  const out = execFileSync('bash', [join(REPO_ROOT, 'hack', 'build-peer.sh'), '--cli'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return out.trim().split('\n').pop()!;
}

const peerWorkflow = (name: string, script: string, extra: Record<string, unknown> = {}) => `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  name: ${name}
  labels:
    suite: argo-cli
spec:
  entrypoint: main
  arguments:
    parameters:
      - name: who
        value: world
  templates:
    - name: main
      inputs:
        parameters:
          - name: who
            value: "{{workflow.parameters.who}}"
      container:
        image: alpine:3.20
        command: [sh, -c]
        args: ["${script}"]
${Object.entries(extra)
  .map(([k, v]) => `  ${k}: ${JSON.stringify(v)}`)
  .join('\n')}
`;

describe('the argo CLI in server mode, unchanged', () => {
  let stack: E2eStack;
  let ns: string;
  let dir: string;
  let bin: string;
  let env: NodeJS.ProcessEnv;

  const argo = (args: string[], timeoutMs = 120_000): Promise<Run> =>
    new Promise((resolve) => {
      execFile(bin, [...args, '-n', ns], { env, timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
        const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? ((err as { code: number }).code as number) : 124) : 0;
        resolve({ code, stdout, stderr });
      });
    });
  /** Runs it and expects exit 0, printing what it said when not. */
  const ok = async (args: string[], timeoutMs?: number): Promise<string> => {
    const r = await argo(args, timeoutMs);
    if (r.code !== 0) throw new Error(`argo ${args.join(' ')} exited ${r.code}:\n${r.stdout}\n${r.stderr}`);
    return r.stdout;
  };
  const file = (name: string, text: string): string => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };

  beforeAll(async () => {
    bin = argoBinary();
    stack = await startE2eStack({ prefix: 'argo-cli', plugins: false, archive: true });
    ns = stack.namespace;
    dir = mkdtempSync(join(tmpdir(), 'argo-cli-'));
    const url = new URL(stack.server!.url);
    env = {
      PATH: process.env.PATH,
      HOME: dir,
      KUBECONFIG: join(dir, 'no-kubeconfig'),
      ARGO_SERVER: url.host,
      ARGO_HTTP1: 'true',
      ARGO_SECURE: 'true',
      ARGO_INSECURE_SKIP_VERIFY: 'true',
      ARGO_TOKEN: `Bearer ${cluster().adminToken}`,
    };
  }, 900_000);

  afterAll(async () => {
    await stack?.stop();
  });

  it('version: the client and the server', async () => {
    const out = await ok(['version']);
    expect(out).toMatch(/argo: v4\.0\.2/);
    expect(out).toMatch(/argo-server: v\d+\.\d+\.\d+/);
  });

  it('submit a file --watch, then list (-o wide, -l, --running), get -o json|yaml and logs', async () => {
    const out = await ok([
      'submit',
      file('hello.yaml', peerWorkflow('hello', 'echo hello {{inputs.parameters.who}}')),
      '-p',
      'who=cli',
      '--watch',
    ]);
    expect(out).toMatch(/Status:\s+Succeeded/);
    expect(await ok(['list'])).toMatch(/hello\s+Succeeded/);
    expect(await ok(['list', '-o', 'wide'])).toMatch(/hello\s+Succeeded/);
    expect(await ok(['list', '-l', 'suite=argo-cli', '-o', 'name'])).toContain('hello');
    expect(await ok(['list', '-l', 'suite=other', '-o', 'name'])).not.toContain('hello');
    expect(await ok(['list', '--running', '-o', 'name'])).not.toContain('hello');
    const wf = JSON.parse(await ok(['get', 'hello', '-o', 'json']));
    expect(wf.status.phase).toBe('Succeeded');
    expect(wf.spec.arguments.parameters).toEqual([{ name: 'who', value: 'cli' }]);
    expect(await ok(['get', 'hello', '-o', 'yaml'])).toMatch(/phase: Succeeded/);
    expect(await ok(['get', 'hello'])).toMatch(/Status:\s+Succeeded/);
    expect(await ok(['logs', 'hello'])).toContain('hello cli');
    expect(await ok(['logs', 'hello', '--follow'])).toContain('hello cli');
  });

  it('over plain HTTP (ARGO_SECURE=false): version, list and get', async () => {
    const plain = await startTestServer({ namespace: ns, secure: false });
    try {
      const saved = env;
      env = { ...env, ARGO_SERVER: new URL(plain.url).host, ARGO_SECURE: 'false' };
      try {
        expect(await ok(['version'])).toMatch(/argo-server: v\d/);
        expect(await ok(['list', '-o', 'name'])).toContain('hello');
        expect(JSON.parse(await ok(['get', 'hello', '-o', 'json'])).status.phase).toBe('Succeeded');
      } finally {
        env = saved;
      }
    } finally {
      await plain.close();
    }
  });

  it('watch and delete', async () => {
    await ok(['submit', file('short.yaml', peerWorkflow('short', 'echo short'))]);
    expect(await ok(['watch', 'short'])).toMatch(/Status:\s+Succeeded/);
    expect(await ok(['delete', 'short'])).toContain("Workflow 'short' deleted");
    expect((await argo(['get', 'short'])).code).not.toBe(0);
  });

  it('retry a failed workflow, resubmit, stop and terminate running ones, suspend and resume', async () => {
    // --wait exits 1 when the workflow did not succeed, as with the peer's server.
    const failed = await argo(['submit', file('fails.yaml', peerWorkflow('fails', 'echo failing; exit 1')), '--wait']);
    expect(failed.code).toBe(1);
    expect(failed.stdout).toContain('fails Failed at');
    expect(JSON.parse(await ok(['get', 'fails', '-o', 'json'])).status.phase).toBe('Failed');
    await ok(['retry', 'fails']);
    expect(JSON.parse(await ok(['get', 'fails', '-o', 'json'])).status.phase).toMatch(/Running|Failed/);
    const resubmitted = await ok(['resubmit', 'hello', '-o', 'json']);
    expect(JSON.parse(resubmitted).metadata.name).toMatch(/^hello-/);
    for (const [name, op, phase] of [
      ['sleeper-stop', 'stop', 'Failed'],
      ['sleeper-terminate', 'terminate', 'Failed'],
    ] as const) {
      await ok(['submit', file(`${name}.yaml`, peerWorkflow(name, 'sleep 300'))]);
      await ok([op, name]);
      expect((await argo(['wait', name], 120_000)).code).toBe(1); // not Succeeded
      expect(JSON.parse(await ok(['get', name, '-o', 'json'])).status.phase).toBe(phase);
    }
    await ok(['submit', file('paused.yaml', peerWorkflow('paused', 'sleep 2'))]);
    await ok(['suspend', 'paused']);
    expect(JSON.parse(await ok(['get', 'paused', '-o', 'json'])).spec.suspend).toBe(true);
    await ok(['resume', 'paused']);
    await ok(['wait', 'paused'], 120_000);
    expect(JSON.parse(await ok(['get', 'paused', '-o', 'json'])).status.phase).toBe('Succeeded');
  });

  it('node set: a waiting approval gets its supplied output parameter, message and phase, and the next step reads it', async () => {
    const approval = `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  name: approval
spec:
  entrypoint: main
  templates:
    - name: main
      steps:
        - - name: approve
            template: approve
        - - name: use
            template: use
            arguments:
              parameters:
                - name: answer
                  value: "{{steps.approve.outputs.parameters.answer}}"
    - name: approve
      suspend: {}
      outputs:
        parameters:
          - name: answer
            valueFrom:
              supplied: {}
    - name: use
      inputs:
        parameters:
          - name: answer
      container:
        image: alpine:3.20
        command: [sh, -c, "echo answer={{inputs.parameters.answer}}"]
`;
    await ok(['submit', file('approval.yaml', approval)]);
    const waiting = async () => {
      const wf = JSON.parse(await ok(['get', 'approval', '-o', 'json']));
      return Object.values(wf.status?.nodes ?? {}).some((n: any) => n.displayName === 'approve' && n.phase === 'Running');
    };
    for (let i = 0; i < 60 && !(await waiting()); i++) await new Promise((r) => setTimeout(r, 1000));
    // A parameter the node does not declare is refused, naming it; nothing changes.
    const wrong = await argo(['node', 'set', 'approval', '--output-parameter', 'nope=1', '--node-field-selector', 'displayName=approve']);
    expect(wrong.code).not.toBe(0);
    expect(wrong.stderr + wrong.stdout).toMatch(/outputs\.parameters\[nope\]: the node declares no such output parameter/);
    await ok([
      'node',
      'set',
      'approval',
      '--output-parameter',
      'answer=yes',
      '--message',
      'approved by the test',
      '--phase',
      'Succeeded',
      '--node-field-selector',
      'displayName=approve',
    ]);
    await ok(['wait', 'approval'], 120_000);
    const wf = JSON.parse(await ok(['get', 'approval', '-o', 'json']));
    expect(wf.status.phase).toBe('Succeeded');
    const nodes = Object.values(wf.status.nodes) as any[];
    const approve = nodes.find((n) => n.displayName === 'approve');
    expect(approve).toMatchObject({ phase: 'Succeeded', message: 'approved by the test' });
    expect(approve.outputs.parameters[0]).toMatchObject({ name: 'answer', value: 'yes' });
    expect(nodes.find((n) => n.displayName === 'use').inputs.parameters[0]).toMatchObject({ name: 'answer', value: 'yes' });
  }, 180_000);

  it('templates and cluster templates: create, list, get, lint, submit --from, delete', async () => {
    const template = (kind: string, name: string) => `
apiVersion: argoproj.io/v1alpha1
kind: ${kind}
metadata:
  name: ${name}
spec:
  entrypoint: main
  arguments:
    parameters:
      - name: who
        value: template
  templates:
    - name: main
      container:
        image: alpine:3.20
        command: [echo, "{{workflow.parameters.who}}"]
`;
    await ok(['template', 'create', file('tmpl.yaml', template('WorkflowTemplate', 'greeter'))]);
    expect(await ok(['template', 'list'])).toContain('greeter');
    expect(await ok(['template', 'get', 'greeter'])).toContain('greeter');
    expect(await ok(['template', 'lint', file('tmpl-lint.yaml', template('WorkflowTemplate', 'other'))])).toMatch(
      /no linting errors found/i,
    );
    const submitted = await ok(['submit', '--from', 'wftmpl/greeter', '-p', 'who=from-cli', '--wait', '-o', 'json']);
    expect(JSON.parse(submitted).metadata.name).toMatch(/^greeter-/);
    await ok(['template', 'delete', 'greeter']);
    expect(await ok(['template', 'list'])).not.toContain('greeter');

    await ok(['cluster-template', 'create', file('ctmpl.yaml', template('ClusterWorkflowTemplate', 'cluster-greeter'))]);
    expect(await ok(['cluster-template', 'list'])).toContain('cluster-greeter');
    expect(await ok(['cluster-template', 'get', 'cluster-greeter'])).toContain('cluster-greeter');
    expect(await ok(['cluster-template', 'lint', file('ctmpl-lint.yaml', template('ClusterWorkflowTemplate', 'x'))])).toMatch(
      /no linting errors found/i,
    );
    await ok(['cluster-template', 'delete', 'cluster-greeter']);
  });

  it('cron workflows: create, list, get, suspend, resume, submit --from, delete', async () => {
    const cron = `
apiVersion: argoproj.io/v1alpha1
kind: CronWorkflow
metadata:
  name: nightly
spec:
  schedules: ["0 3 * * *"]
  workflowSpec:
    entrypoint: main
    templates:
      - name: main
        container:
          image: alpine:3.20
          command: [echo, nightly]
`;
    await ok(['cron', 'create', file('cron.yaml', cron)]);
    expect(await ok(['cron', 'list'])).toContain('nightly');
    expect(await ok(['cron', 'get', 'nightly'])).toContain('0 3 * * *');
    await ok(['cron', 'suspend', 'nightly']);
    expect(await ok(['cron', 'get', 'nightly', '-o', 'json'])).toMatch(/"suspend": true/);
    await ok(['cron', 'resume', 'nightly']);
    const run = JSON.parse(await ok(['submit', '--from', 'cronwf/nightly', '-o', 'json']));
    expect(run.metadata.name).toMatch(/^nightly-/);
    await ok(['cron', 'delete', 'nightly']);
    expect(await ok(['cron', 'list'])).not.toContain('nightly');
  });

  it('lint: a good file passes, a broken one names the field', async () => {
    expect(await ok(['lint', file('good.yaml', peerWorkflow('good', 'echo ok'))])).toMatch(/no linting errors found/i);
    const bad = await argo(['lint', file('bad.yaml', peerWorkflow('bad', 'echo ok').replace('entrypoint: main', 'entrypoint: nowhere'))]);
    expect(bad.code).not.toBe(0);
    expect(bad.stdout + bad.stderr).toContain('nowhere');
  });

  it('archive: list, get, list-label-keys, list-label-values, delete', async () => {
    let listed = '';
    for (let i = 0; i < 60 && !listed.includes('hello'); i++) {
      listed = await ok(['archive', 'list']);
      if (!listed.includes('hello')) await new Promise((r) => setTimeout(r, 1000));
    }
    expect(listed).toContain('hello');
    const uid = JSON.parse(await ok(['get', 'hello', '-o', 'json'])).metadata.uid as string;
    expect(await ok(['archive', 'get', uid])).toContain('hello');
    expect(await ok(['archive', 'list-label-keys'])).toContain('suite');
    expect(await ok(['archive', 'list-label-values', '-l', 'suite'])).toContain('argo-cli');
    await ok(['archive', 'delete', uid]);
    expect(await ok(['archive', 'list'])).not.toMatch(new RegExp(`\\b${uid}\\b`));
  });
});
