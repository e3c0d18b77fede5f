/**
 * stop, terminate, suspend, resume, resubmit and wait on running workflows, the way people use
 * them: `plugflow …` through the REST server (client mode: the caller's token, so RBAC decides)
 * and straight to Kubernetes with a kubeconfig, on the whole stack (controller, runner, server).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LABEL_RESUBMITTED_FROM, type Workflow } from '../src/api/index.js';
import { runTemplateCreate, runTemplateDelete, runTemplateGet, runTemplateList } from '../src/cli/templates.js';
import { runOperation, runWait } from '../src/cli/workflow-operations.js';
import { cluster } from './support/cluster.js';
import { nodeNamed, startE2eStack, waitFor, type E2eStack } from './support/e2e.js';
import { call, grantRole, rule } from './support/server.js';

let stack: E2eStack;

beforeAll(async () => {
  stack = await startE2eStack({ prefix: 'wf-ops', plugins: false });
}, 300_000);
afterAll(async () => {
  await stack?.stop();
}, 120_000);

const sleepy = (name: string, seconds: number, extra: Partial<Workflow['spec']> = {}): Workflow => ({
  apiVersion: 'plugflow.io/v1alpha1',
  kind: 'Workflow',
  metadata: { generateName: `${name}-` },
  spec: {
    entrypoint: 'main',
    arguments: { parameters: [{ name: 'word', value: 'first' }] },
    templates: [
      { name: 'main', steps: [[{ name: 'nap', template: 'nap' }], [{ name: 'say', template: 'say' }]] },
      { name: 'nap', container: { image: 'busybox', command: ['sleep', String(seconds)] } },
      { name: 'say', script: { image: 'busybox', command: ['sh'], source: 'echo {{workflow.parameters.word}}' } },
    ],
    ...extra,
  },
});

/** What `plugflow` prints and returns, through the REST server with the admin's token. */
async function plugflow(op: Parameters<typeof runOperation>[1], name: string, token = cluster().adminToken) {
  const lines: string[] = [];
  const code = await runOperation(
    name,
    op,
    { server: stack.server!.url, token, insecureSkipTlsVerify: true, namespace: stack.namespace },
    { out: (l) => lines.push(l), err: (l) => lines.push(l) },
  );
  return { code, text: lines.join('\n') };
}

const running = (name: string) =>
  waitFor(`a running step pod of ${name}`, async () => {
    const wf = await stack.getWorkflow(name);
    return Object.values(wf.status?.nodes ?? {}).some((n) => n.type === 'Pod' && n.phase === 'Running') ? wf : undefined;
  });

describe('operations on running workflows', () => {
  it('stop: the running step is stopped, nothing after it runs, and the workflow ends Failed', async () => {
    const name = await stack.submit(sleepy('stop', 120));
    await running(name);
    const r = await plugflow({ kind: 'stop' }, name);
    expect(r, r.text).toMatchObject({ code: 0 });
    expect(r.text).toContain(`Workflow ${stack.namespace}/${name} stopping`);
    const wf = await stack.waitForCompletion(name, 60_000);
    expect(wf.spec.shutdown).toBe('Stop');
    expect(wf.status?.phase).toBe('Failed');
    expect(Object.values(wf.status?.nodes ?? {}).filter((n) => n.displayName === 'say')).toHaveLength(0);
    // A finished workflow: refused with the reason, exit code 1, nothing changed.
    const again = await plugflow({ kind: 'terminate' }, name);
    expect(again.code).toBe(1);
    expect(again.text).toContain('has already finished (Failed): there is nothing to terminate');
    expect((await stack.getWorkflow(name)).spec.shutdown).toBe('Stop');
  });

  it('terminate through the kubeconfig (no server): the workflow ends at once', async () => {
    const name = await stack.submit(sleepy('terminate', 120));
    await running(name);
    const lines: string[] = [];
    const code = await runOperation(
      name,
      { kind: 'terminate' },
      { kubeconfig: stack.kubeconfigPath, namespace: stack.namespace },
      { out: (l) => lines.push(l), err: (l) => lines.push(l) },
    );
    expect(code, lines.join('\n')).toBe(0);
    const wf = await stack.waitForCompletion(name, 60_000);
    expect(wf.spec.shutdown).toBe('Terminate');
    expect(wf.status?.phase).toBe('Failed');
  });

  it('suspend then resume: the next step waits while suspended and runs after resume', async () => {
    const name = await stack.submit(sleepy('suspend', 3));
    await running(name);
    expect((await plugflow({ kind: 'suspend' }, name)).code).toBe(0);
    // nap ends after 3 s; while suspended, say does not start.
    await waitFor('nap to finish', async () => nodeNamed(await stack.getWorkflow(name), 'nap').phase === 'Succeeded', {
      timeoutMs: 60_000,
    });
    await new Promise((r) => setTimeout(r, 3000));
    const held = await stack.getWorkflow(name);
    expect(held.spec.suspend).toBe(true);
    expect(Object.values(held.status?.nodes ?? {}).filter((n) => n.displayName === 'say')).toHaveLength(0);
    const r = await plugflow({ kind: 'resume' }, name);
    expect(r.code, r.text).toBe(0);
    const wf = await stack.waitForCompletion(name, 60_000);
    expect(wf.status?.phase).toBe('Succeeded');
    expect(nodeNamed(wf, 'say').outputs?.result).toBe('first');
  });

  it('resubmit: a new workflow with the same spec, a new argument value and a label naming the old one; wait reports it', async () => {
    const name = await stack.submit(sleepy('resubmit', 0));
    await stack.waitForCompletion(name, 60_000);
    const r = await plugflow({ kind: 'resubmit', parameters: { word: 'second' } }, name);
    expect(r.code, r.text).toBe(0);
    const created = /resubmitted as \S+\/(\S+)/.exec(r.text)?.[1];
    expect(created, r.text).toMatch(new RegExp(`^${name}-`));
    const lines: string[] = [];
    const code = await runWait(
      [created!],
      { server: stack.server!.url, token: cluster().adminToken, insecureSkipTlsVerify: true, namespace: stack.namespace },
      { out: (l) => lines.push(l), err: (l) => lines.push(l) },
    );
    expect(code, lines.join('\n')).toBe(0);
    expect(lines.join('\n')).toContain(`Workflow ${stack.namespace}/${created} Succeeded`);
    const wf = await stack.getWorkflow(created!);
    expect(wf.metadata.labels?.[LABEL_RESUBMITTED_FROM]).toBe(name);
    expect(nodeNamed(wf, 'say').outputs?.result).toBe('second');
    // An argument the workflow does not have: refused, naming it; nothing created.
    const bad = await plugflow({ kind: 'resubmit', parameters: { nope: 'x' } }, name);
    expect(bad).toEqual({ code: 1, text: `Workflow ${stack.namespace}/${name} has no argument "nope" (its arguments: word)` });
  });

  it('resubmit --memoized: the new workflow keeps the steps that succeeded and runs only the rest', async () => {
    const name = await stack.submit(
      sleepy('memo-resubmit', 6, {
        templates: [
          {
            name: 'main',
            steps: [[{ name: 'first', template: 'first' }], [{ name: 'nap', template: 'nap' }], [{ name: 'say', template: 'say' }]],
          },
          { name: 'first', script: { image: 'busybox', command: ['sh'], source: 'echo done before' } },
          { name: 'nap', container: { image: 'busybox', command: ['sleep', '6'] } },
          { name: 'say', script: { image: 'busybox', command: ['sh'], source: 'echo {{workflow.parameters.word}}' } },
        ],
      }),
    );
    await waitFor(`${name}: nap running`, async () => {
      const wf = await stack.getWorkflow(name);
      return Object.values(wf.status?.nodes ?? {}).some((n) => n.displayName === 'nap' && n.phase === 'Running') ? wf : undefined;
    });
    expect((await plugflow({ kind: 'stop' }, name)).code).toBe(0);
    expect((await stack.waitForCompletion(name, 60_000)).status?.phase).toBe('Failed');
    const withArgs = await plugflow({ kind: 'resubmit', memoized: true, parameters: { word: 'x' } }, name);
    expect(withArgs.code).toBe(1);
    expect(withArgs.text).toContain('a memoized resubmit keeps the old run');
    const r = await plugflow({ kind: 'resubmit', memoized: true }, name);
    expect(r.code, r.text).toBe(0);
    const created = /resubmitted as \S+\/(\S+)/.exec(r.text)?.[1];
    const wf = await stack.waitForCompletion(created!, 90_000);
    expect(wf.status?.phase, JSON.stringify(wf.status?.nodes)).toBe('Succeeded');
    expect(wf.spec.suspend).toBeUndefined();
    const first = nodeNamed(wf, 'first');
    expect(first).toMatchObject({ phase: 'Succeeded', outputs: { result: 'done before' } });
    expect(first.podName).toBeUndefined(); // not run again: carried from the old workflow
    expect(nodeNamed(wf, 'nap').podName).toBeDefined();
    expect(nodeNamed(wf, 'say').outputs?.result).toBe('first');
    // A Succeeded workflow has nothing to run again.
    const again = await plugflow({ kind: 'resubmit', memoized: true }, created!);
    expect(again).toEqual({
      code: 1,
      text: `Workflow ${stack.namespace}/${created} is Succeeded: only a workflow that ended Failed or Error can be resubmitted memoized`,
    });
  });

  it('retry: a stopped workflow runs its stopped step again and then the rest; a Succeeded one is refused', async () => {
    const name = await stack.submit(sleepy('retry', 6));
    await running(name);
    expect((await plugflow({ kind: 'stop' }, name)).code).toBe(0);
    const stopped = await stack.waitForCompletion(name, 60_000);
    expect(stopped.status?.phase).toBe('Failed');
    const r = await plugflow({ kind: 'retry' }, name);
    expect(r.code, r.text).toBe(0);
    expect(r.text).toContain(`Workflow ${stack.namespace}/${name} retried`);
    const wf = await stack.waitForCompletion(name, 90_000);
    expect(wf.status?.phase, JSON.stringify(wf.status?.nodes)).toBe('Succeeded');
    expect(wf.spec.shutdown).toBeUndefined();
    expect(nodeNamed(wf, 'nap').phase).toBe('Succeeded');
    expect(nodeNamed(wf, 'say').outputs?.result).toBe('first');
    const again = await plugflow({ kind: 'retry' }, name);
    expect(again.code).toBe(1);
    expect(again.text).toContain('only a workflow that ended Failed or Error can be retried');
  });

  it("acts with the caller's rights: a user who may read workflows but not change them gets 403 and nothing changes", async () => {
    const name = await stack.submit(sleepy('rbac', 60));
    await running(name);
    await grantRole(stack.namespace, 'carol', 'wf-reader', [rule('workflows', 'get', 'list')]);
    const carol = cluster().userTokens.carol!;
    const reply = await call('PUT', `${stack.server!.url}/api/v1/workflows/${stack.namespace}/${name}/stop`, { token: carol, body: {} });
    expect(reply.status, reply.text).toBe(403);
    expect((await stack.getWorkflow(name)).spec.shutdown).toBeUndefined();
    const resubmit = await call('PUT', `${stack.server!.url}/api/v1/workflows/${stack.namespace}/${name}/resubmit`, {
      token: carol,
      body: {},
    });
    expect(resubmit.status, resubmit.text).toBe(403);
    // The REST body is checked before anything is done, each error naming the field.
    const bad = await call('PUT', `${stack.server!.url}/api/v1/workflows/${stack.namespace}/${name}/resume`, {
      token: cluster().adminToken,
      body: { nodeFieldSelector: 'templateName=x' },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toContain('nodeFieldSelector');
    await plugflow({ kind: 'terminate' }, name);
  });
});

describe('templates and lint', () => {
  const viaServer = () => ({
    server: stack.server!.url,
    token: cluster().adminToken,
    insecureSkipTlsVerify: true,
    namespace: stack.namespace,
  });
  const printed = () => {
    const lines: string[] = [];
    return { lines, p: { out: (l: string) => lines.push(l), err: (l: string) => lines.push(l) } };
  };

  it('plugflow template create/list/get/delete through the REST server, and a workflow using it passes lint', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'plugflow-tpl-'));
    const file = join(dir, 'greet.yaml');
    writeFileSync(
      file,
      [
        'kind: WorkflowTemplate',
        'metadata: {name: greet}',
        'spec:',
        '  templates: [{name: hello, container: {image: busybox, command: [echo, hi]}}]',
      ].join('\n'),
    );
    const c = printed();
    expect(await runTemplateCreate('WorkflowTemplate', [file], viaServer(), c.p), c.lines.join('\n')).toBe(0);
    expect(c.lines).toEqual([`WorkflowTemplate ${stack.namespace}/greet created`]);
    const l = printed();
    await runTemplateList('WorkflowTemplate', { ...viaServer(), output: 'name' }, l.p);
    expect(l.lines).toEqual(['greet']);
    const g = printed();
    await runTemplateGet('WorkflowTemplate', 'greet', { ...viaServer(), output: 'json' }, g.p);
    expect(JSON.parse(g.lines.join('\n')).spec.templates[0].name).toBe('hello');

    const lint = (workflow: unknown) =>
      call('POST', `${stack.server!.url}/api/v1/workflows/${stack.namespace}/lint`, { token: cluster().adminToken, body: { workflow } });
    const uses = (template: string) => ({
      metadata: { generateName: 'uses-' },
      spec: { entrypoint: 'main', templates: [{ name: 'main', steps: [[{ name: 'a', templateRef: { name: 'greet', template } }]] }] },
    });
    const ok = await lint(uses('hello'));
    expect(ok.status, ok.text).toBe(200);
    const bad = await lint(uses('nothere'));
    expect(bad.status).toBe(400);
    expect(bad.body.message).toContain('nothere');
    expect(await listedWorkflows(), 'lint stores nothing').not.toContain('uses-');

    const d = printed();
    expect(await runTemplateDelete('WorkflowTemplate', ['greet'], viaServer(), d.p)).toBe(0);
    const gone = await call('GET', `${stack.server!.url}/api/v1/workflow-templates/${stack.namespace}/greet`, {
      token: cluster().adminToken,
    });
    expect(gone.status).toBe(404);
  });

  it('refuses a malformed template naming the field, and a caller without rights gets 403', async () => {
    const url = `${stack.server!.url}/api/v1/workflow-templates/${stack.namespace}`;
    const bad = await call('POST', url, {
      token: cluster().adminToken,
      body: { template: { metadata: { name: 'bad' }, spec: { templates: 'x' } } },
    });
    expect(bad.status, bad.text).toBe(400);
    expect(bad.body.message).toContain('spec.templates');
    const dave = cluster().userTokens.dave!;
    const denied = await call('POST', url, { token: dave, body: { template: { metadata: { name: 'd' }, spec: { templates: [] } } } });
    expect(denied.status, denied.text).toBe(403);
  });
});

async function listedWorkflows(): Promise<string> {
  const r = await call('GET', `${stack.server!.url}/api/v1/workflows/${stack.namespace}`, { token: cluster().adminToken });
  return JSON.stringify(r.body?.items?.map((w: Workflow) => w.metadata.name) ?? []);
}
