/**
 * Step pods on a real node beside the local pod runner, in one run on this machine:
 *
 * - workflows/min for N one-step container workflows (`echo`) submitted at once;
 * - pod start latency: from the step pod's creation to its main container running (or already
 *   done), both seen through one watch on the namespace — so the watch's own delay is in both
 *   figures alike, and the API server's second-granular timestamps are not used;
 * - API writes per workflow, counted the same way on both: every client's writes from
 *   kube-apiserver's `apiserver_request_total` (the kubelet's or the runner's pod status writes
 *   included), and the controller's own from its `plugflow_controller_api_writes_total`.
 *
 * The local runner's figures are the baseline the node's ratios refer to. The node is the one of
 * `plugflow dev --node=kubelet` (hack/node/, plugflow installed with kubectl from install.yaml);
 * where it cannot start, its figures are left out and the reason is printed.
 *
 * Run: make bench-node (builds the node and the images first; root), or npx tsx bench/node-bench.ts
 * (NODE_BENCH_WORKFLOWS, default 20). Figures into bench/RESULTS.md, section "node".
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Workflow } from '../src/api/index.js';
import { startDevStack } from '../src/devenv/dev-stack.js';
import { forRegistrylessNode, nodeUnavailableReason } from '../src/devenv/node-cluster.js';
import { INSTALL_NAMESPACE, startNodeDev } from '../src/devenv/node-dev.js';
import { KubeClient } from '../src/kube/client.js';
import { loadKubeConfig } from '../src/kube/kubeconfig.js';
import { NAMESPACES, PODS, WORKFLOWS } from '../src/kube/resource.js';
import { printFigures, type Figure } from './figures.js';
import { machineDescription, updateResultsSection } from './run-all.js';

const FINAL = new Set(['Succeeded', 'Failed', 'Error']);

interface Measured {
  workflows: number;
  seconds: number;
  perMinute: number;
  startP50: number;
  startP99: number;
  /** The warm-up workflow's pod, alone on the machine. */
  startSingle: number;
  allWrites: number;
  controllerWrites: number;
  failed: number;
}

const round = (x: number) => Math.round(x * 10) / 10;
const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;

/** Every client's write requests so far, from kube-apiserver's own counter. */
async function apiServerWrites(client: KubeClient): Promise<number> {
  let sum = 0;
  for (const line of (await client.getText('/metrics')).split('\n')) {
    if (line.startsWith('apiserver_request_total{') && /verb="(POST|PUT|PATCH|DELETE|APPLY)"/.test(line))
      sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

/** Sum of a prometheus counter in an exposition text. */
function counterSum(text: string, name: string): number {
  let sum = 0;
  for (const line of text.split('\n'))
    if (line.startsWith(`${name}{`) || line.startsWith(`${name} `)) sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  return sum;
}

function echoWorkflow(name: string): Workflow {
  return {
    apiVersion: 'plugflow.io/v1alpha1',
    kind: 'Workflow',
    metadata: { name },
    spec: { entrypoint: 'main', templates: [{ name: 'main', container: { image: 'busybox:1.36', command: ['echo', 'hi'] } }] },
  } as Workflow;
}

async function measure(
  client: KubeClient,
  label: string,
  n: number,
  prepare: (wf: Workflow) => Workflow,
  controllerWrites: () => Promise<number>,
  log: (l: string) => void,
): Promise<Measured> {
  const ns = `node-bench-${label}-${Date.now().toString(36)}`;
  await client.create(NAMESPACES, undefined, { metadata: { name: ns } });
  const created = new Map<string, number>();
  const started = new Map<string, number>();
  const stop = new AbortController();
  const watching = client
    .watch(
      PODS,
      { namespace: ns },
      (e) => {
        const pod = e.object as {
          metadata?: { name?: string };
          status?: { containerStatuses?: { name: string; state?: Record<string, unknown> }[] };
        };
        const name = pod.metadata?.name;
        if (!name) return;
        const now = performance.now();
        if (!created.has(name)) created.set(name, now);
        const main = pod.status?.containerStatuses?.find((c) => c.name === 'main');
        if (!started.has(name) && (main?.state?.running || main?.state?.terminated)) started.set(name, now);
      },
      stop.signal,
    )
    .catch(() => undefined);
  // One warm-up workflow (images, informers, first connections), not measured.
  await client.create(WORKFLOWS, ns, prepare(echoWorkflow('warm-up')));
  await until(
    async () => FINAL.has((await client.get<Workflow>(WORKFLOWS, ns, 'warm-up')).status?.phase ?? ''),
    120_000,
    `${label}: warm-up`,
  );
  const one = [...started].map(([p, t]) => t - (created.get(p) ?? t));
  const startSingle = Math.round(one[0] ?? NaN);
  created.clear();
  started.clear();
  const writes0 = [await controllerWrites(), await apiServerWrites(client)];
  const t0 = performance.now();
  await Promise.all(Array.from({ length: n }, (_, i) => client.create(WORKFLOWS, ns, prepare(echoWorkflow(`w-${i}`)))));
  let done: Workflow[] = [];
  await until(
    async () => {
      done = (await client.list<Workflow>(WORKFLOWS, { namespace: ns })).items.filter(
        (w) => w.metadata.name !== 'warm-up' && FINAL.has(w.status?.phase ?? ''),
      );
      return done.length >= n;
    },
    600_000,
    `${label}: ${n} workflows to finish`,
  );
  const seconds = (performance.now() - t0) / 1000;
  const writes1 = [await controllerWrites(), await apiServerWrites(client)];
  stop.abort();
  await watching;
  const lat = [...started]
    .filter(([p]) => created.has(p))
    .map(([p, t]) => t - created.get(p)!)
    .sort((a, b) => a - b);
  await client.delete(NAMESPACES, undefined, ns).catch(() => undefined);
  const m: Measured = {
    workflows: n,
    seconds: round(seconds),
    perMinute: round(n / (seconds / 60)),
    startP50: Math.round(percentile(lat, 50)),
    startP99: Math.round(percentile(lat, 99)),
    startSingle,
    allWrites: round((writes1[1]! - writes0[1]!) / n),
    controllerWrites: round((writes1[0]! - writes0[0]!) / n),
    failed: done.filter((w) => w.status?.phase !== 'Succeeded').length,
  };
  log(`[node-bench] ${label}: ${JSON.stringify(m)}`);
  return m;
}

async function until(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs / 1000}s waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

export async function runNodeBench(): Promise<Figure[]> {
  const n = Number(process.env.NODE_BENCH_WORKFLOWS ?? 20);
  const log = (l: string) => console.log(l);
  // Baseline: the local pod runner on a local control plane of its own.
  const dir = mkdtempSync(join(tmpdir(), 'plugflow-node-bench-'));
  const stack = await startDevStack({ runner: true, serverPort: 0, secure: false, plugins: false, dir, progress: () => undefined });
  let local: Measured;
  try {
    const client = await KubeClient.fromKubeConfig(stack.adminKubeConfig);
    const localWrites = async () => (await stack.controller.metrics.apiWrites.get()).values.reduce((s, v) => s + v.value, 0);
    local = await measure(client, 'local', n, (wf) => wf, localWrites, log);
    await client.close();
  } finally {
    await stack.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  const figures: Figure[] = [
    {
      name: `step-pod workflows/min, ${n} at once, local pod runner`,
      value: local.perMinute,
      unit: 'workflows/min',
      goal: 'reported (baseline)',
      met: local.failed === 0,
      note: `${n} in ${local.seconds} s, ${local.failed} not Succeeded`,
    },
    {
      name: 'pod start latency p50 / p99, local pod runner',
      value: local.startP50,
      unit: `ms p50 (p99 ${local.startP99} ms)`,
      goal: 'reported (baseline)',
      met: true,
      note: `pod created → main container running, both seen through one watch; ${n} pods at once on ${cpus().length} cores; one pod alone: ${local.startSingle} ms`,
    },
    {
      name: 'API writes per workflow, local pod runner',
      value: local.allWrites,
      unit: 'writes (all clients)',
      goal: 'reported (baseline)',
      met: true,
      note: `controller's own: ${local.controllerWrites}`,
    },
  ];
  const reason = await nodeUnavailableReason();
  if (reason) {
    console.log(`[node-bench] real node skipped: ${reason}`);
    return figures;
  }
  const node = await startNodeDev({
    plugins: false,
    pluginConfigMaps: [],
    workflowNamespaces: [],
    progress: (l) => log(`[node-bench] ${l}`),
  });
  let real: Measured;
  try {
    const client = await KubeClient.fromKubeConfig(loadKubeConfig(node.kubeconfig));
    // The bench reads the controller's /metrics through the API server's pod proxy, which carries
    // no caller token: it runs the installed controller with --metrics-auth=none.
    await node.kubectl([
      '-n',
      INSTALL_NAMESPACE,
      'patch',
      'deployment',
      'plugflow-controller',
      '--type=json',
      '-p',
      JSON.stringify([{ op: 'add', path: '/spec/template/spec/containers/0/args/-', value: '--metrics-auth=none' }]),
    ]);
    await node.kubectl(['-n', INSTALL_NAMESPACE, 'rollout', 'status', 'deploy/plugflow-controller', '--timeout=180s']);
    const pod = await node.get(
      ['pods', '-n', INSTALL_NAMESPACE, '-l', 'app.kubernetes.io/name=plugflow-controller'],
      '{.items[0].metadata.name}',
    );
    const nodeWrites = async () =>
      counterSum(
        await client.getText(`/api/v1/namespaces/${INSTALL_NAMESPACE}/pods/${pod}:9090/proxy/metrics`),
        'plugflow_controller_api_writes_total',
      );
    real = await measure(
      client,
      'node',
      n,
      (wf) => forRegistrylessNode(wf as unknown as Record<string, unknown>) as unknown as Workflow,
      nodeWrites,
      log,
    );
    await client.close();
  } finally {
    await node.stop();
  }
  const ratio = (a: number, b: number) => `×${(a / b).toFixed(2)} the local runner's`;
  figures.push(
    {
      name: `step-pod workflows/min, ${n} at once, real node (containerd, runc, kubelet)`,
      value: real.perMinute,
      unit: 'workflows/min',
      goal: 'reported',
      met: real.failed === 0,
      note: `${n} in ${real.seconds} s, ${real.failed} not Succeeded; ${ratio(real.perMinute, local.perMinute)}`,
    },
    {
      name: 'pod start latency p50 / p99, real node',
      value: real.startP50,
      unit: `ms p50 (p99 ${real.startP99} ms)`,
      goal: 'reported',
      met: true,
      note: `${n} pods at once; p50 ${ratio(real.startP50, local.startP50)}; one pod alone: ${real.startSingle} ms (${ratio(real.startSingle, local.startSingle)})`,
    },
    {
      name: 'API writes per workflow, real node',
      value: real.allWrites,
      unit: 'writes (all clients)',
      goal: 'reported',
      met: true,
      note: `controller's own: ${real.controllerWrites} (local runner ${local.controllerWrites}); all clients ${ratio(real.allWrites, local.allWrites)}`,
    },
  );
  return figures;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  runNodeBench().then(
    (f) => {
      const title = 'Step pods: real node beside the local pod runner (`make bench-node`)';
      printFigures(title, f);
      updateResultsSection(
        'node',
        title,
        figureTable(f, `Machine: ${machineDescription()}. Date: ${new Date().toISOString().slice(0, 10)}.`),
      );
    },
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}

function figureTable(figures: Figure[], heading: string): string {
  const cell = (x: string) => x.replace(/\|/g, '\\|');
  return [
    heading,
    '',
    '| figure | value | goal | met |',
    '|---|---|---|---|',
    ...figures.map(
      (f) =>
        `| ${cell(f.name)}${f.note ? `<br><sub>${cell(f.note)}</sub>` : ''} | ${f.value} ${cell(f.unit)} | ${cell(f.goal)} | ${f.met ? 'yes' : '**no**'} |`,
    ),
  ].join('\n');
}
