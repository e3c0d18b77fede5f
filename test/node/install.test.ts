/**
 * plugflow on real nodes (hack/node/up.sh: three kubelets, each with its containerd and runc, bridge
 * CNI, kube-proxy),
 * installed the way the README says — `kubectl apply` of manifests/install.yaml with the image
 * `make image` built — and used the way people use it: workflows, executor plugins turned on with
 * `kubectl set env`, events through the server's Service. Pods here have real images, cgroups,
 * probes and networking, which the local pod runner of the other suites does not.
 *
 * Skipped, with the reason printed, where the node cannot start (no root, containerd, CNI plugins
 * or image archives). About 4½ minutes when it runs (nodes start ~10 s, stop ~16 s;
 * the node loss at the end waits ~50 s for the kubelet's Lease to go stale).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDocument } from 'yaml';
import { readYamlDocuments } from '../../src/yaml/kube-yaml.js';
import { REPO_ROOT } from '../support/apply.js';
import { forRegistrylessNode, type NodeCluster, nodeUnavailableReason } from '../../src/devenv/node-cluster.js';
import { startNodeDev } from '../../src/devenv/node-dev.js';

const run = promisify(execFile);
const reason = await nodeUnavailableReason();
if (reason) console.log(`[node suite] skipped: ${reason}`);

const NS = 'node-e2e';
/** A Workflow named from `prefix` (the API server adds a suffix). */
const workflow = (prefix: string, spec: Record<string, unknown>) => ({
  apiVersion: 'plugflow.io/v1alpha1',
  kind: 'Workflow',
  metadata: { generateName: prefix },
  spec,
});
const VERSION = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const SYSTEM = 'plugflow';
/** Example workflows running at once in the examples test. */
const EXAMPLES_AT_ONCE = 5;

describe.skipIf(reason !== undefined)('plugflow installed on a real node', () => {
  let node: NodeCluster;

  beforeAll(async () => {
    // What `plugflow dev --node=kubelet` does: the node up, install.yaml applied with kubectl,
    // both Deployments rolled out, the agent's account in NS (README "Install into a cluster").
    node = await startNodeDev({
      plugins: false,
      pluginConfigMaps: [],
      workflowNamespaces: [NS],
      progress: (l) => console.log(`[node suite] ${l}`),
    });
  }, 600_000);
  afterAll(async () => {
    await node?.stop();
  }, 300_000);

  it('manifests/install.yaml applies and both Deployments roll out with their probes passing', async () => {
    for (const d of ['plugflow-controller', 'plugflow-server']) {
      const [want, ready] = (await node.get(['deploy', d, '-n', SYSTEM], '{.spec.replicas} {.status.readyReplicas}')).split(' ');
      expect(ready, `${d} ready replicas`).toBe(want);
    }
    // Ready means the readiness probes (/readyz over HTTP and HTTPS) answered on the pods' own IPs.
    const ips = await node.get(['pods', '-n', SYSTEM], '{.items[*].status.podIP}');
    expect(
      ips.split(' ').every((ip) => ip.startsWith('10.88.')),
      ips,
    ).toBe(true);
  }, 240_000);

  it('runs every example workflow to its documented end', async () => {
    const files = readdirSync(join(REPO_ROOT, 'examples/workflows'))
      .filter((f) => f.endsWith('.yaml') && f !== 'suspend-resume.yaml')
      .map((f) => `examples/workflows/${f}`);
    // A workflow still running at the deadline is reported with its nodes like a wrong ending, not thrown,
    // so the report names every such workflow instead of the first one's cluster snapshot.
    const runOne = async (f: string) => {
      const name = await node.submit(f, NS);
      const end = await node
        .finished(name, NS, 240_000)
        .catch((err: Error) => ({ phase: 'still running', message: err.message.split('\n')[0] }));
      return { f, name, ...end };
    };
    // At most EXAMPLES_AT_ONCE at a time: this checks what each example does on a real node; the
    // pods of all of them starting at once on a 2-core CI machine would make it a load test, and
    // that is the soak's job (hack/soak.ts).
    const results: Awaited<ReturnType<typeof runOne>>[] = [];
    const queue = [...files];
    await Promise.all(
      Array.from({ length: EXAMPLES_AT_ONCE }, async () => {
        for (let f = queue.shift(); f !== undefined; f = queue.shift()) results.push(await runOne(f));
      }),
    );
    // exit-handler.yaml fails its main step on purpose (its handler still runs).
    const want = (f: string) => (f.endsWith('exit-handler.yaml') ? 'Failed' : 'Succeeded');
    const wrong = results.filter((r) => r.phase !== want(r.f));
    const report: string[] = [];
    for (const r of wrong) {
      const nodes = (await node.workflowNodes(r.name, NS)) as { displayName?: string; phase?: string; message?: string }[];
      const bad = nodes.filter((n) => n.phase !== 'Succeeded').map((n) => `${n.displayName}: ${n.phase} ${n.message ?? ''}`);
      const pods = await node.podStates(r.name, NS).catch((err: Error) => [err.message]);
      // What the controller, the kubelet and containerd said about the first pod that did not succeed.
      const logs = pods.length > 0 ? await node.logLines(r.name, pods[0]!.split(' ')[0]!) : [];
      report.push(
        `${r.f} (${r.name}) ended ${r.phase}, not ${want(r.f)}: ${r.message}; nodes not Succeeded: ${bad.join('; ')}; ` +
          `pods not Succeeded: ${pods.join('; ')}; logs: ${logs.join(' | ')}`,
      );
    }
    // Only the workflows that ended otherwise, each with its failed nodes, so the end of a CI log says which and why.
    expect(report, `${results.length} example workflows`).toEqual([]);
  }, 600_000);

  it('runs the resource template examples as their service account, after kubectl apply of their rbac.yaml', async () => {
    await node.kubectl(['apply', '-n', NS, '-f', join(REPO_ROOT, 'examples/resource/rbac.yaml')]);
    const files = readdirSync(join(REPO_ROOT, 'examples/resource'))
      .filter((f) => f.endsWith('.yaml') && f !== 'rbac.yaml')
      .map((f) => `examples/resource/${f}`);
    const results = await Promise.all(
      files.map(async (f) => {
        const name = await node.submit(f, NS);
        return { f, name, ...(await node.finished(name, NS, 120_000)) };
      }),
    );
    const wrong = results.filter((r) => r.phase !== 'Succeeded').map((r) => `${r.f} (${r.name}) ended ${r.phase}: ${r.message}`);
    expect(wrong, `${results.length} resource examples`).toEqual([]);
  }, 240_000);

  it("applies a manifest too long for a termination message from the kubelet's log of the pod that fetched it", async () => {
    const text = Array.from({ length: 150 }, (_, i) => `line ${i} ${'x'.repeat(60)}`).join('\n') + '\n';
    const manifest = `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  generateName: long-manifest-\ndata:\n  text: |\n${text.replace(/^/gm, '    ')}`;
    expect(Buffer.byteLength(manifest)).toBeGreaterThan(8_000);
    const name = await node.create(
      workflow('manifest-from-log-', {
        entrypoint: 'main',
        serviceAccountName: 'resource-steps', // from examples/resource/rbac.yaml, applied above
        templates: [
          {
            name: 'main',
            inputs: { artifacts: [{ name: 'm', path: '/tmp/m.yaml', raw: { data: manifest } }] },
            resource: { action: 'create', manifestFrom: { artifact: { name: 'm' } } },
          },
        ],
      }),
      NS,
    );
    const end = await node.finished(name, NS, 120_000);
    expect(end.phase, end.message).toBe('Succeeded');
    const [made] = (await node.workflowNodes(name, NS)) as { outputs?: { result?: string } }[];
    const cm = made!.outputs!.result!.replace(/^configmap\//, '');
    expect(await node.get(['configmap', cm, '-n', NS], '{.data.text}')).toBe(text);
  }, 180_000);

  it('turns on executor plugins with kubectl set env and runs the sample plugin workflow', async () => {
    await node.kubectl(['-n', SYSTEM, 'set', 'env', 'deploy/plugflow-controller', 'WORKFLOW_EXECUTOR_PLUGINS=true']);
    await node.kubectl(['-n', SYSTEM, 'rollout', 'status', 'deploy/plugflow-controller', '--timeout=180s']);
    await node.kubectl(['apply', '-n', SYSTEM, '-f', join(REPO_ROOT, 'examples/plugins/hello/hello-executor-plugin-configmap.yaml')]);
    await node.waitFor(
      '"Executor plugin added" in the controller log',
      async () => {
        const log = await node.kubectl(['-n', SYSTEM, 'logs', 'deploy/plugflow-controller']).catch(() => '');
        return log.includes('Executor plugin added') && log.includes('"name":"hello"') ? true : undefined;
      },
      60_000,
    );
    const name = await node.submit('examples/plugins/hello/workflow.yaml', NS);
    const r = await node.finished(name, NS);
    expect(r.phase, r.message).toBe('Succeeded');
    const outputs = (await node.workflowNodes(name, NS)).map((n) => JSON.stringify(n.outputs ?? {}));
    expect(outputs.join(' ')).toContain('Ada');
  }, 300_000);

  it('the TypeScript progress plugin, built for the cluster from its plugin.yaml, runs from the plugflow image', async () => {
    // What examples/plugins/README.md tells people: the plugflow image carries main.ts compiled.
    const dir = mkdtempSync(join(tmpdir(), 'plugflow-progress-'));
    const doc = parseDocument(readFileSync(join(REPO_ROOT, 'examples/plugins/progress/plugin.yaml'), 'utf8'));
    doc.setIn(['spec', 'sidecar', 'container', 'image'], `plugflow/plugflow:${VERSION}`);
    doc.setIn(['spec', 'sidecar', 'container', 'command'], ['node', 'examples/plugins/progress/main.js']);
    doc.setIn(['spec', 'sidecar', 'container', 'securityContext', 'readOnlyRootFilesystem'], true);
    writeFileSync(join(dir, 'plugin.yaml'), doc.toString());
    await run('node', [join(REPO_ROOT, 'bin/plugflow.js'), 'plugin', 'build', dir]);
    await node.kubectl(['apply', '-n', SYSTEM, '-f', join(dir, 'progress-executor-plugin-configmap.yaml')]);
    rmSync(dir, { recursive: true, force: true });
    await node.waitFor('"Executor plugin added" for progress in the controller log', async () => {
      const log = await node.kubectl(['-n', SYSTEM, 'logs', 'deploy/plugflow-controller']).catch(() => '');
      return log.split('\n').some((l) => l.includes('Executor plugin added') && l.includes('"name":"progress"')) ? true : undefined;
    });
    const name = await node.submit('examples/plugins/progress/workflow.yaml', NS);
    const r = await node.finished(name, NS);
    expect(r.phase, r.message).toBe('Succeeded');
    const job = (await node.workflowNodes(name, NS)).find((n) => JSON.stringify(n.outputs ?? {}).includes('"steps"'));
    expect(JSON.stringify(job?.outputs)).toContain('"value":"3"');
  }, 300_000);

  it("each plugin container of the agent pod reads its own token and no other, on the kernel's file permissions", async () => {
    // hello (Python) and progress (TypeScript) are both installed now: one agent pod, two sidecars.
    const wf = workflow('tokens-', {
      entrypoint: 'main',
      templates: [
        {
          name: 'main',
          dag: {
            tasks: [
              { name: 'greet', template: 'greet' },
              { name: 'hold', template: 'hold' },
            ],
          },
        },
        { name: 'greet', plugin: { hello: { name: 'Ada' } } },
        { name: 'hold', suspend: { duration: '90s' } },
      ],
    });
    const name = await node.create(wf, NS);
    const agent = await node.waitFor('the agent pod with every container ready', async () => {
      const out = await node.get(
        ['pods', '-n', NS, '-l', `workflows.plugflow.io/workflow=${name},workflows.plugflow.io/component=agent`],
        '{.items[0].metadata.name} {.items[0].status.containerStatuses[*].ready}',
      );
      const [pod, ...ready] = out.split(' ');
      return pod && ready.length >= 3 && ready.every((x) => x === 'true') ? pod : undefined;
    });
    const exec = async (container: string, argv: string[]) =>
      JSON.parse(await node.kubectl(['exec', '-n', NS, agent, '-c', container, '--', ...argv])) as Record<string, unknown>;
    const py = `import os,stat,json,hashlib
d='/var/run/workflow'; st=os.stat(d+'/token')
try:
  open(d+'/token','w'); w='written'
except OSError as e: w=e.strerror
print(json.dumps({'files':sorted(os.listdir(d)),'mode':oct(stat.S_IMODE(st.st_mode)),'fileGid':st.st_gid,'uid':os.getuid(),'groups':os.getgroups(),
 'sha':hashlib.sha256(open(d+'/token','rb').read()).hexdigest(),'write':w,'allTokens':os.path.exists('/var/run/plugflow/tokens'),
 'apiToken':os.path.exists('/var/run/secrets/kubernetes.io/serviceaccount/token')}))`;
    const js = `const fs=require('fs'),c=require('crypto');const d='/var/run/workflow';const st=fs.statSync(d+'/token');let w='written';
try{fs.writeFileSync(d+'/token','x')}catch(e){w=e.code}
console.log(JSON.stringify({files:fs.readdirSync(d).sort(),mode:'0o'+(st.mode&0o777).toString(8),fileGid:st.gid,uid:process.getuid(),groups:process.getgroups(),
sha:c.createHash('sha256').update(fs.readFileSync(d+'/token')).digest('hex'),write:w,allTokens:fs.existsSync('/var/run/plugflow/tokens'),
apiToken:fs.existsSync('/var/run/secrets/kubernetes.io/serviceaccount/token')}))`;
    const hello = await exec('hello', ['python3', '-c', py]);
    const progress = await exec('progress', ['node', '-e', js]);
    for (const [plugin, seen] of [
      ['hello', hello],
      ['progress', progress],
    ] as const) {
      expect(seen, plugin).toMatchObject({ files: ['token'], mode: '0o440', uid: 65534, allTokens: false, apiToken: false });
      expect(seen.write, `${plugin} writing its token`).not.toBe('written');
      expect(seen.groups as number[], `${plugin}: the token's group (fsGroup) is one of the container's`).toContain(seen.fileGid);
    }
    expect(hello.sha, 'two plugins, two tokens').not.toBe(progress.sha);
    // The agent's main container holds every token (it calls every plugin): the same ones.
    const main = await exec('main', [
      'node',
      '-e',
      `const fs=require('fs'),c=require('crypto');const h=(p)=>c.createHash('sha256').update(fs.readFileSync('/var/run/plugflow/tokens/'+p+'/token')).digest('hex');console.log(JSON.stringify({hello:h('hello'),progress:h('progress')}))`,
    ]);
    expect(main).toEqual({ hello: hello.sha, progress: progress.sha });
    await node.kubectl(['delete', 'workflow', '-n', NS, name, '--wait=false']);
  }, 240_000);

  it('a step over its memory limit is killed by the kernel and ends OOMKilled', async () => {
    const wf = workflow('oom-', {
      entrypoint: 'hog',
      templates: [
        {
          name: 'hog',
          container: {
            image: 'busybox:1.36',
            command: ['sh', '-c', 'tail /dev/zero'],
            resources: { limits: { memory: '48Mi' } },
          },
        },
      ],
    });
    const name = await node.create(wf, NS);
    const r = await node.finished(name, NS);
    const messages = (await node.workflowNodes(name, NS)).map((n) => `${n.type} ${n.phase} ${n.message ?? ''}`).join('; ');
    expect(r.phase, `${r.message}; nodes: ${messages}`).toBe('Failed');
    expect(messages).toContain('OOMKilled');
  }, 180_000);

  it('a controller pod deleted mid-run is replaced by its Deployment and the workflow finishes with each step run once', async () => {
    const step = (n: number) => [{ name: `s${n}`, template: 'nap' }];
    const wf = workflow('survive-', {
      entrypoint: 'main',
      templates: [
        { name: 'main', steps: [step(1), step(2), step(3)] },
        { name: 'nap', container: { image: 'busybox:1.36', command: ['sh', '-c', 'sleep 3; echo done'] } },
      ],
    });
    const name = await node.create(wf, NS);
    await node.waitFor('the first step pod to run', async () =>
      (await node.get(['pods', '-n', NS, '-l', `workflows.plugflow.io/workflow=${name}`], '{.items[*].status.phase}')).includes('Running')
        ? true
        : undefined,
    );
    const old = await node.get(['pods', '-n', SYSTEM, '-l', 'app.kubernetes.io/name=plugflow-controller'], '{.items[0].metadata.name}');
    await node.kubectl(['delete', 'pod', '-n', SYSTEM, old, '--wait=false']);
    const r = await node.finished(name, NS, 240_000);
    expect(r.phase, r.message).toBe('Succeeded');
    const pods = (await node.get(['pods', '-n', NS, '-l', `workflows.plugflow.io/workflow=${name}`], '{.items[*].metadata.name}')).split(
      ' ',
    );
    expect(pods, 'one pod per step: none lost, none run twice').toHaveLength(3);
    const now = await node.get(['pods', '-n', SYSTEM, '-l', 'app.kubernetes.io/name=plugflow-controller'], '{.items[*].metadata.name}');
    expect(now).not.toContain(old);
  }, 300_000);

  it('a step pod deleted while it runs ends its step and the workflow in Error "pod deleted"', async () => {
    const wf = workflow('deleted-pod-', {
      entrypoint: 'nap',
      templates: [{ name: 'nap', container: { image: 'busybox:1.36', command: ['sleep', '300'] } }],
    });
    const name = await node.create(wf, NS);
    const pod = await node.waitFor('the step pod to run', async () => {
      const [podName, phase] = (
        await node.get(
          ['pods', '-n', NS, '-l', `workflows.plugflow.io/workflow=${name}`],
          '{.items[0].metadata.name} {.items[0].status.phase}',
        )
      ).split(' ');
      return phase === 'Running' ? podName : undefined;
    });
    await node.kubectl(['delete', 'pod', '-n', NS, pod, '--wait=false']);
    const r = await node.finished(name, NS, 120_000);
    const step = (await node.workflowNodes(name, NS)).find((n) => n.type === 'Pod');
    expect(r.phase, r.message).toBe('Error');
    expect(step?.phase, JSON.stringify(step)).toBe('Error');
    expect(step?.message).toMatch(/pod deleted/);
  }, 180_000);

  it('the event endpoint answers through the server Service and its binding submits a workflow', async () => {
    for (const f of ['workflow-template.yaml', 'binding.yaml', 'rbac.yaml']) {
      const text = readFileSync(join(REPO_ROOT, 'examples/events', f), 'utf8');
      for (const doc of readYamlDocuments(text, f) as Record<string, unknown>[]) {
        await node.kubectl(['apply', '-n', NS, '-f', '-'], JSON.stringify(forRegistrylessNode(doc)));
      }
    }
    const token = (await node.kubectl(['create', 'token', '-n', NS, 'event-sender'])).trim();
    const ip = await node.get(['svc', 'plugflow-server', '-n', SYSTEM], '{.spec.clusterIP}');
    const url = `https://${ip}:2746/api/v1/events/${NS}/`;
    const selector = 'workflows.plugflow.io/workflow-event-binding=greet-on-push';
    // The servers learn of the new binding through their watch: send until one submits.
    const name = await node.waitFor(
      'a workflow submitted by the event',
      async () => {
        const { stdout } = await run('curl', [
          '-sS',
          '-k',
          '-w',
          ' %{http_code}',
          url,
          '-H',
          `Authorization: Bearer ${token}`,
          '-H',
          'Content-Type: application/json',
          '-H',
          'X-Event-Type: push',
          '--data-binary',
          `@${join(REPO_ROOT, 'examples/events/event.json')}`,
        ]);
        expect(stdout.trim().split(' ').pop(), stdout).toBe('200');
        await new Promise((r) => setTimeout(r, 1000));
        return (await node.get(['workflows', '-n', NS, '-l', selector], '{.items[0].metadata.name}')) || undefined;
      },
      60_000,
    );
    const r = await node.finished(name, NS);
    expect(r.phase, r.message).toBe('Succeeded');
  }, 240_000);

  it('the installed server serves the web UI from its image, and knows who a token is', async () => {
    const ip = await node.get(['svc', 'plugflow-server', '-n', SYSTEM], '{.spec.clusterIP}');
    const page = await run('curl', ['-sS', '-k', '-w', ' %{http_code}', `https://${ip}:2746/`]);
    expect(page.stdout.trim().endsWith(' 200'), page.stdout).toBe(true);
    expect(page.stdout).toContain('/ui/app.js');
    const js = await run('curl', ['-sS', '-k', '-o', '/dev/null', '-w', '%{http_code} %{size_download}', `https://${ip}:2746/ui/app.js`]);
    const [code, size] = js.stdout.trim().split(' ');
    expect(code).toBe('200');
    expect(Number(size)).toBeGreaterThan(10_000);
    const token = (await node.kubectl(['create', 'token', '-n', NS, 'default'])).trim();
    const who = await run('curl', ['-sS', '-k', `https://${ip}:2746/api/v1/userinfo`, '-H', `Authorization: Bearer ${token}`]);
    expect(JSON.parse(who.stdout).username).toBe(`system:serviceaccount:${NS}:default`);
  }, 60_000);

  it('a server pod deleted while events arrive is replaced by its Deployment, and every event answered 200 submits its workflow', async () => {
    // Runs after the test above, which applied the binding, its template and the sender's account.
    const token = (await node.kubectl(['create', 'token', '-n', NS, 'event-sender'])).trim();
    const ip = await node.get(['svc', 'plugflow-server', '-n', SYSTEM], '{.spec.clusterIP}');
    const selector = 'workflows.plugflow.io/workflow-event-binding=greet-on-push';
    const countWorkflows = async () =>
      (await node.get(['workflows', '-n', NS, '-l', selector], '{.items[*].metadata.name}')).split(' ').filter(Boolean).length;
    const before = await countWorkflows();
    const serverPods = () => node.get(['pods', '-n', SYSTEM, '-l', 'app.kubernetes.io/name=plugflow-server'], '{.items[*].metadata.name}');
    const victim = (await serverPods()).split(' ')[0];
    const codes: Record<string, number> = {};
    const started = Date.now();
    let deleted = false;
    // One event every ~400 ms for 12 s through the Service (kube-proxy picks a server each time);
    // the victim is deleted 2 s in. A refused or failed request is one the sender knows to resend.
    while (Date.now() - started < 12_000) {
      if (!deleted && Date.now() - started > 2_000) {
        await node.kubectl(['delete', 'pod', '-n', SYSTEM, victim, '--wait=false']);
        deleted = true;
      }
      const code = await run('curl', [
        '-sS',
        '-k',
        '-o',
        '/dev/null',
        '-w',
        '%{http_code}',
        '--max-time',
        '5',
        `https://${ip}:2746/api/v1/events/${NS}/`,
        '-H',
        `Authorization: Bearer ${token}`,
        '-H',
        'Content-Type: application/json',
        '-H',
        'X-Event-Type: push',
        '--data-binary',
        `@${join(REPO_ROOT, 'examples/events/event.json')}`,
      ])
        .then((r) => r.stdout.trim())
        .catch(() => 'no answer');
      codes[code] = (codes[code] ?? 0) + 1;
      await new Promise((r) => setTimeout(r, 400));
    }
    const accepted = codes['200'] ?? 0;
    console.log(`[node suite] answers while a server pod was deleted: ${JSON.stringify(codes)}`);
    expect(accepted, JSON.stringify(codes)).toBeGreaterThan(5);
    await node.waitFor(
      `${accepted} workflows from the accepted events (answers: ${JSON.stringify(codes)})`,
      async () => ((await countWorkflows()) - before >= accepted ? true : undefined),
      60_000,
    );
    await new Promise((r) => setTimeout(r, 3_000));
    expect(await countWorkflows(), 'one workflow per event answered 200: none lost, none twice').toBe(before + accepted);
    await node.kubectl(['-n', SYSTEM, 'rollout', 'status', 'deploy/plugflow-server', '--timeout=120s']);
    const now = await serverPods();
    expect(now.split(' '), now).toHaveLength(2);
    expect(now).not.toContain(victim);
  }, 240_000);

  // Last: it leaves one node dead (down.sh clears it).
  it('step pods spread over the three nodes; a node lost mid-step ends that step naming the node, and its retry runs on another', async () => {
    const ready = await node.get(['nodes'], '{range .items[*]}{.metadata.name}={.status.conditions[?(@.type=="Ready")].status} {end}');
    expect(ready.trim().split(' ').sort(), ready).toEqual(node.nodes.map((n) => `${n}=True`).sort());
    expect(node.nodes).toHaveLength(3);
    // The victim runs no controller (a lost controller pod waits five minutes for its eviction).
    const controllerNodes = await node.get(
      ['pods', '-n', SYSTEM, '-l', 'app.kubernetes.io/name=plugflow-controller'],
      '{.items[*].spec.nodeName}',
    );
    const doomedNode = node.nodes.filter((n) => !controllerNodes.split(' ').includes(n)).at(-1)!;
    const hostname = (operator: 'In' | 'NotIn') => ({
      nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator, values: [doomedNode] }] }],
    });
    // Three steps of 800m CPU off the doomed node: one node's 2 CPUs hold two of them, so the
    // scheduler must use both other nodes. The doomed step prefers the doomed node; its retries
    // avoid the node that failed them (retryStrategy.affinity), which is tainted by then anyway.
    // Each sleeps 30 s: on a busy machine the four start seconds apart, and must be Running at once.
    const wf = workflow('lost-node-', {
      entrypoint: 'main',
      templates: [
        {
          name: 'main',
          steps: [[1, 2, 3].map((i) => ({ name: `spread-${i}`, template: 'spread' })).concat([{ name: 'doomed', template: 'doomed' }])],
        },
        {
          name: 'spread',
          affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: hostname('NotIn') } },
          container: { image: 'busybox:1.36', command: ['sleep', '30'], resources: { requests: { cpu: '800m' } } },
        },
        {
          name: 'doomed',
          affinity: {
            nodeAffinity: {
              preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 100, preference: hostname('In').nodeSelectorTerms[0] }],
            },
          },
          retryStrategy: { limit: 2, retryPolicy: 'Always', affinity: { nodeAntiAffinity: {} } },
          container: { image: 'busybox:1.36', command: ['sleep', '30'] },
        },
      ],
    });
    const name = await node.create(wf, NS);
    const podsOn = async () =>
      (
        await node.get(
          ['pods', '-n', NS, '-l', `workflows.plugflow.io/workflow=${name}`],
          '{range .items[*]}{.metadata.name}={.spec.nodeName}={.status.phase} {end}',
        )
      )
        .trim()
        .split(' ')
        .filter(Boolean)
        .map((p) => p.split('='));
    const running = await node.waitFor('the four step pods to run', async () => {
      const pods = await podsOn();
      return pods.length === 4 && pods.every((p) => p[2] === 'Running') ? pods : undefined;
    });
    const doomedPod = running.find((p) => p[1] === doomedNode);
    expect(doomedPod, `a pod on ${doomedNode}: ${JSON.stringify(running)}`).toBeDefined();
    expect(new Set(running.map((p) => p[1])).size, JSON.stringify(running)).toBe(3);
    const lostAt = Date.now();
    await node.lose(doomedNode);
    const r = await node.finished(name, NS, 240_000);
    const steps = await node.workflowNodes(name, NS);
    const attempts = steps.filter((n) => n.type === 'Pod' && (n as { displayName?: string }).displayName?.startsWith('doomed'));
    expect(r.phase, `${r.message}\n${JSON.stringify(steps, null, 1)}`).toBe('Succeeded');
    const failed = attempts.find((a) => a.phase === 'Error');
    console.log(
      `[node suite] ${doomedNode} lost: the workflow ${r.phase} ${Math.round((Date.now() - lostAt) / 1000)} s later; the attempt there: ${failed?.message}`,
    );
    expect(failed?.message, JSON.stringify(attempts)).toContain(`node "${doomedNode}"`);
    const retried = attempts.find((a) => a.phase === 'Succeeded') as { hostNodeName?: string } | undefined;
    expect(retried?.hostNodeName, JSON.stringify(attempts)).toBeDefined();
    expect(retried?.hostNodeName).not.toBe(doomedNode);
    expect(
      steps.filter((n) => n.type === 'Pod' && n.phase === 'Running'),
      'no step left Running',
    ).toEqual([]);
  }, 360_000);
});
