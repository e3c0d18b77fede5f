/**
 * `make bench-peer-node`: container steps on the real node (hack/node/: containerd, runc, kubelet),
 * plugflow and the peer side by side on the same one-step workflow (`echo hi` in busybox:1.36).
 *
 * plugflow runs as users install it (`kubectl apply` of manifests/install.yaml and the built image,
 * as `plugflow dev --node=kubelet` does); the peer's controller (hack/build-peer.sh) runs on the
 * host, at its defaults and tuned (`--qps 1000 --burst 2000` + INFORMER_WRITE_BACK=true), with its
 * own executor image (argoexec, built from the same module and imported into the node's
 * containerd) and the executor role its docs recommend for emissary (workflowtaskresults create,
 * patch) for the step pods' service account. The peer starts fresh for each run; plugflow's
 * controller keeps running (it is the installed Deployment) and ignores the peer's workflows.
 *
 * Per run: workflows/min from the first create to the last finish (seen by a watch), the
 * controller's CPU (utime+stime from /proc: plugflow's is the pod's process, found by its command
 * line), its RSS (idle before the run, peak during it, sampled every 100 ms), and writes per
 * workflow by client from the API server's audit log: the controller, the step pods (the peer's
 * wait container; plugflow's step pods carry no token), the kubelet, and every client but the bench.
 * One unmeasured workflow per engine first (images, informers, connections).
 *
 *   PEER_NODE_WORKFLOWS=40 PEER_REPEATS=2 PEER_ENGINES=plugflow,peer,peer-tuned
 *   PEER_CPU_PROF=DIR  plugflow's controller runs on the host with --cpu-prof into DIR (see
 *                      plugflowOnHost; summarise with bench/profile-summary.ts); figures printed only
 *
 * Needs root (the node); where the node cannot start, the reason is printed and nothing is written.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from '../src/devenv/dev-stack.js';
import { nodeUnavailableReason, type NodeCluster } from '../src/devenv/node-cluster.js';
import { freePort } from '../src/devenv/control-plane.js';
import { INSTALL_NAMESPACE, startNodeDev } from '../src/devenv/node-dev.js';
import { KubeClient } from '../src/kube/client.js';
import { loadKubeConfig, tokenKubeconfig } from '../src/kube/kubeconfig.js';
import { CLUSTER_ROLE_BINDINGS, NAMESPACES, ROLE_BINDINGS, ROLES, SERVICE_ACCOUNTS } from '../src/kube/resource.js';
import { AuditLog, auditArgs } from './peer/audit.js';
import { median, medianCell, ratio } from './peer/cells.js';
import { ControllerProcess, cpuSeconds, PeakRss, rssMiB, waitReady } from './peer/controller-process.js';
import { cpuProfArgs, installedControllerEnv } from './peer/installed-controller.js';
import { installPeer, PEER_TUNED_ARGS, PEER_TUNED_ENV, peerExecImage, peerPaths, peerVersion } from './peer/peer-build.js';
import { dropNamespace, runPoint, type Group } from './peer/workloads.js';
import { machineDescription, updateResultsSection } from './run-all.js';

type Engine = 'plugflow' | 'peer' | 'peer-tuned';
const ENGINES: Engine[] = ['plugflow', 'peer', 'peer-tuned'];
const GROUP: Record<Engine, Group> = { plugflow: 'plugflow.io', peer: 'argoproj.io', 'peer-tuned': 'argoproj.io' };
/** The peer's controller acts as this service account (cluster-admin), so the audit log tells it apart. */
const PEER_NS = 'peer-system';
const PEER_SA = 'peer-controller';
const CONTROLLER_USER: Record<Engine, string> = {
  plugflow: `system:serviceaccount:${INSTALL_NAMESPACE}:plugflow-controller`,
  peer: `system:serviceaccount:${PEER_NS}:${PEER_SA}`,
  'peer-tuned': `system:serviceaccount:${PEER_NS}:${PEER_SA}`,
};
/** The bench's own client (the node's admin token): its creates are not counted. */
const BENCH_USER = 'admin';

interface Run {
  engine: Engine;
  rep: number;
  n: number;
  perMinute: number;
  succeeded: number;
  cpu: number;
  /** `cpu` less what the controller uses idle over as long a time. */
  cpuAboveIdle: number;
  idleCpuPerSecond: number;
  idleRss: number;
  peakRss: number;
  controller: number;
  pods: number;
  kubelet: number;
  all: number;
  byResource: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** How long the controller's idle CPU is measured before each run. */
const IDLE_WINDOW_MS = 5000;

/** The installed controller's process on this host: `node /usr/local/bin/plugflow controller --leader-elect …` (the image's launcher). */
function plugflowControllerPid(): number {
  const found: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    let argv: string[];
    try {
      argv = readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0');
    } catch {
      continue;
    }
    if (argv.some((a) => /\/plugflow(\.js)?$/.test(a)) && argv.includes('controller') && argv.includes('--leader-elect'))
      found.push(Number(d));
  }
  if (found.length !== 1)
    throw new Error(`expected one plugflow controller process on this host, found ${found.length} (${found.join(', ')})`);
  return found[0]!;
}

/**
 * PEER_CPU_PROF: plugflow's controller on the host instead of its pod (the Deployment scaled to 0),
 * as the installed one runs — its service account's token, the Deployment's environment — but
 * without leader election, like the peer, and with --cpu-prof: one profile of the whole bench,
 * written when it stops.
 */
async function plugflowOnHost(node: NodeCluster, dir: string): Promise<ControllerProcess> {
  const k = (args: string[]) => node.kubectl(['-n', INSTALL_NAMESPACE, ...args]);
  await k(['scale', 'deploy/plugflow-controller', '--replicas=0']);
  await k(['wait', '--for=delete', 'pod', '-l', 'app.kubernetes.io/name=plugflow-controller', '--timeout=60s']);
  const token = (await k(['create', 'token', 'plugflow-controller', '--duration=24h'])).trim();
  const kubeconfig = join(dir, 'plugflow.kubeconfig');
  writeFileSync(kubeconfig, kubeconfigWithToken(node.kubeconfig, token, 'plugflow-controller'), { mode: 0o600 });
  const port = await freePort();
  const proc = new ControllerProcess(
    'plugflow',
    process.execPath,
    [...cpuProfArgs(), join(REPO_ROOT, 'bin', 'plugflow.js'), 'controller', '--kubeconfig', kubeconfig, '--metrics-port', String(port)],
    { ...installedControllerEnv(), PLUGFLOW_NAMESPACE: INSTALL_NAMESPACE },
    join(dir, 'plugflow.log'),
  );
  proc.start();
  await waitReady(`http://127.0.0.1:${port}/readyz`, 60_000);
  return proc;
}

/** A kubeconfig for the node's API server that authenticates with `token`. */
function kubeconfigWithToken(adminPath: string, token: string, user: string): string {
  const cluster = loadKubeConfig(adminPath).getCurrentCluster();
  if (!cluster?.caData) throw new Error(`${adminPath}: no current cluster with certificate-authority-data`);
  return tokenKubeconfig(cluster.server, cluster.caData, token, user);
}

/** The peer's executor role (its docs' minimum for emissary) for the step pods' service account. */
async function peerExecutorAccess(client: KubeClient, ns: string): Promise<void> {
  await client.create(ROLES, ns, {
    metadata: { name: 'executor' },
    rules: [{ apiGroups: ['argoproj.io'], resources: ['workflowtaskresults'], verbs: ['create', 'patch'] }],
  });
  await client.create(ROLE_BINDINGS, ns, {
    metadata: { name: 'executor' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'executor' },
    subjects: [{ kind: 'ServiceAccount', name: 'default', namespace: ns }],
  });
}

interface Ctx {
  client: KubeClient;
  audit: AuditLog;
  dir: string;
  peerBin: string;
  peerKubeconfig: string;
  execImage: string;
  plugflowPid: number;
  plugflowRss: PeakRss;
}

async function measure(engine: Engine, n: number, rep: number, ctx: Ctx): Promise<Run | undefined> {
  const peer =
    engine === 'plugflow'
      ? undefined
      : new ControllerProcess(
          engine,
          ctx.peerBin,
          [
            '--kubeconfig',
            ctx.peerKubeconfig,
            '--executor-image',
            ctx.execImage,
            '--executor-image-pull-policy',
            'IfNotPresent',
            ...(engine === 'peer-tuned' ? PEER_TUNED_ARGS : []),
          ],
          { LEADER_ELECTION_DISABLE: 'true', ...(engine === 'peer-tuned' ? PEER_TUNED_ENV : {}) },
          join(ctx.dir, `${engine}.log`),
        );
  const ns = `pn-${engine}-${rep}-${Date.now().toString(36)}`;
  try {
    await ctx.client.create(NAMESPACES, undefined, { metadata: { name: ns } });
    // Pods are refused until the controller manager has made the namespace's default ServiceAccount.
    for (let i = 0; !(await ctx.client.get(SERVICE_ACCOUNTS, ns, 'default').then(Boolean, () => false)); i++) {
      if (i > 300) throw new Error(`namespace ${ns} has no default ServiceAccount after 30 s`);
      await sleep(100);
    }
    if (peer) {
      await peerExecutorAccess(ctx.client, ns);
      peer.start();
      await sleep(5000); // informers synced, start-up done: not counted
    }
    const pid = peer ? peer.pid : ctx.plugflowPid;
    const idleRss = rssMiB(pid);
    // What the controller spends doing nothing (leader election, resyncs, probes), per second.
    const idle0 = [cpuSeconds(pid), performance.now()] as const;
    await sleep(IDLE_WINDOW_MS);
    const idleCpuPerSecond = (cpuSeconds(pid) - idle0[0]) / ((performance.now() - idle0[1]) / 1000);
    const rss = peer ?? { takePeak: () => ctx.plugflowRss.take() };
    rss.takePeak();
    const cpu0 = cpuSeconds(pid);
    const t0 = performance.now();
    const mark = ctx.audit.mark();
    const r = await runPoint(ctx.client, GROUP[engine], 'pod', n, ns, 10 * 60_000);
    await sleep(3000); // trailing writes (pod labels, Events) belong to the run
    const cpu = cpuSeconds(pid) - cpu0;
    const cpuAboveIdle = cpu - idleCpuPerSecond * ((performance.now() - t0) / 1000);
    const peakRss = rss.takePeak();
    const w = ctx.audit.writesSince(mark);
    if (rep === 0) return undefined; // the warm-up
    const of = (pred: (user: string) => boolean) => [...w.byUser].filter(([u]) => pred(u)).reduce((s, [, v]) => s + v, 0) / n;
    const controllerUser = CONTROLLER_USER[engine];
    const run: Run = {
      engine,
      rep,
      n,
      perMinute: r.succeeded / (r.seconds / 60),
      succeeded: r.succeeded,
      cpu,
      cpuAboveIdle,
      idleCpuPerSecond,
      idleRss,
      peakRss,
      controller: of((u) => u === controllerUser),
      pods: of((u) => u.startsWith(`system:serviceaccount:${ns}:`)),
      kubelet: of((u) => u.startsWith('system:node:')),
      all: of((u) => u !== BENCH_USER),
      byResource: [...w.byUserResource]
        .filter(([k]) => k.startsWith(`${controllerUser} `) || k.startsWith(`system:serviceaccount:${ns}:`))
        .map(
          ([k, v]) =>
            `${k.replace(controllerUser, 'controller').replace(`system:serviceaccount:${ns}:default`, 'pods')} ${(v / n).toFixed(1)}`,
        )
        .join(', '),
    };
    console.log(
      `  ${engine} #${rep}: ${r.succeeded}/${n} Succeeded in ${r.seconds.toFixed(1)} s = ${run.perMinute.toFixed(0)}/min, CPU ${cpu.toFixed(2)} s (${cpuAboveIdle.toFixed(2)} s above idle; idle ${(1000 * idleCpuPerSecond).toFixed(1)} ms/s), RSS idle ${idleRss.toFixed(0)} / peak ${peakRss.toFixed(0)} MiB; writes/wf: controller ${run.controller.toFixed(1)}, pods ${run.pods.toFixed(1)}, kubelet ${run.kubelet.toFixed(1)}, all ${run.all.toFixed(1)} (${run.byResource})`,
    );
    return run;
  } finally {
    await peer?.stop();
    await dropNamespace(ctx.client, ns);
  }
}

function table(runs: Run[], engines: Engine[]): string {
  const figures: { name: string; get: (r: Run) => number; d: number }[] = [
    { name: 'workflows/min', get: (r) => r.perMinute, d: 0 },
    { name: 'controller CPU ms per workflow', get: (r) => (1000 * r.cpu) / r.n, d: 1 },
    { name: 'controller CPU ms per workflow, above idle', get: (r) => (1000 * r.cpuAboveIdle) / r.n, d: 1 },
    { name: 'controller idle CPU (ms per second)', get: (r) => 1000 * r.idleCpuPerSecond, d: 1 },
    { name: "controller's writes per workflow", get: (r) => r.controller, d: 1 },
    { name: "step pods' writes per workflow", get: (r) => r.pods, d: 1 },
    { name: "kubelet's writes per workflow", get: (r) => r.kubelet, d: 1 },
    { name: 'writes per workflow, every client but the bench', get: (r) => r.all, d: 1 },
    { name: 'controller idle RSS (MiB)', get: (r) => r.idleRss, d: 0 },
    { name: 'controller peak RSS (MiB)', get: (r) => r.peakRss, d: 0 },
  ];
  const lines = [
    `| figure | ${engines.join(' | ')} | plugflow / peer | plugflow / peer-tuned |`,
    `|---|${engines.map(() => '---|').join('')}---|---|`,
  ];
  for (const f of figures) {
    const xs = (e: Engine) => runs.filter((r) => r.engine === e).map(f.get);
    const cells = engines.map((e) => medianCell(xs(e), f.d));
    lines.push(
      `| ${f.name} | ${cells.join(' | ')} | ${ratio(median(xs('plugflow')), median(xs('peer')))} | ${ratio(median(xs('plugflow')), median(xs('peer-tuned')))} |`,
    );
  }
  return lines.join('\n');
}

async function main(): Promise<void> {
  const n = Number(process.env.PEER_NODE_WORKFLOWS ?? 40);
  const repeats = Number(process.env.PEER_REPEATS ?? 2);
  // The node takes 60 pods (hack/node/up.sh, maxPods), plugflow's own among them.
  if (!Number.isInteger(n) || n < 1 || n > 50) throw new Error(`PEER_NODE_WORKFLOWS: a whole number from 1 to 50, not "${n}"`);
  if (!Number.isInteger(repeats) || repeats < 1) throw new Error(`PEER_REPEATS: a whole number from 1, not "${repeats}"`);
  const engines = (process.env.PEER_ENGINES ?? ENGINES.join(',')).split(',').map((s) => s.trim()) as Engine[];
  for (const e of engines) if (!ENGINES.includes(e)) throw new Error(`PEER_ENGINES: unknown engine "${e}" (one of ${ENGINES.join(', ')})`);
  const reason = await nodeUnavailableReason();
  if (reason) {
    console.log(`[peer-node-bench] not run: ${reason}`);
    return;
  }
  const t0 = performance.now();
  const { bin: peerBin, crds } = peerPaths();
  const execArchive = peerExecImage();
  const version = peerVersion(peerBin);
  // The audit log's files go where up.sh's flags can name them: a path without spaces.
  const dir = mkdtempSync(join(tmpdir(), 'plugflow-peer-node-'));
  if (/\s/.test(dir)) throw new Error(`the temporary directory ${dir} has a space; set TMPDIR to a path without one`);
  process.env.PLUGFLOW_NODE_APISERVER_ARGS = auditArgs(dir).join(' ');
  const node = await startNodeDev({
    plugins: false,
    pluginConfigMaps: [],
    workflowNamespaces: [],
    progress: (l) => console.log(`[node] ${l}`),
  });
  const runs: Run[] = [];
  try {
    const execImage = `localhost/peer-argoexec:${version}`;
    await node.importImage('localhost/peer-argoexec', execArchive);
    const admin = loadKubeConfig(node.kubeconfig);
    const client = await KubeClient.fromKubeConfig(admin);
    await installPeer(admin, client, crds);
    await client.create(NAMESPACES, undefined, { metadata: { name: PEER_NS } });
    await client.create(SERVICE_ACCOUNTS, PEER_NS, { metadata: { name: PEER_SA } });
    await client.create(CLUSTER_ROLE_BINDINGS, undefined, {
      metadata: { name: PEER_SA },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
      subjects: [{ kind: 'ServiceAccount', name: PEER_SA, namespace: PEER_NS }],
    });
    const token = (await node.kubectl(['create', 'token', PEER_SA, '-n', PEER_NS, '--duration=24h'])).trim();
    const peerKubeconfig = join(dir, 'peer.kubeconfig');
    writeFileSync(peerKubeconfig, kubeconfigWithToken(node.kubeconfig, token, PEER_SA), { mode: 0o600 });
    const hosted = process.env.PEER_CPU_PROF ? await plugflowOnHost(node, dir) : undefined;
    const plugflowPid = hosted?.pid ?? plugflowControllerPid();
    const plugflowRss = new PeakRss(() => plugflowPid);
    const ctx: Ctx = {
      client,
      audit: new AuditLog(join(dir, 'audit.log')),
      dir,
      peerBin,
      peerKubeconfig,
      execImage,
      plugflowPid,
      plugflowRss,
    };
    try {
      for (const e of engines) await measure(e, 1, 0, ctx);
      for (let rep = 1; rep <= repeats; rep++) {
        console.log(`${n} one-step container workflows at once, repeat ${rep}`);
        for (const e of rep % 2 ? engines : [...engines].reverse()) {
          const run = await measure(e, n, rep, ctx);
          if (run) runs.push(run);
        }
      }
    } finally {
      plugflowRss.stop();
      await hosted?.stop();
      await client.close();
    }
  } finally {
    await node.stop();
  }
  const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: REPO_ROOT, encoding: 'utf8' }).trim();
  const body = [
    `Machine: ${machineDescription()}. Date: ${new Date().toISOString().slice(0, 10)}. plugflow ${commit}; peer: Argo Workflows ${version} (hack/build-peer.sh). Took ${((performance.now() - t0) / 60_000).toFixed(1)} min.`,
    '',
    `Command: \`make bench-peer-node\`. ${n} one-step container workflows (\`echo hi\` in busybox:1.36) submitted at once on the real node (hack/node/), ${repeats} repeat(s), engines alternating; cells: median (range). ` +
      'plugflow: installed from manifests/install.yaml with its image, as `plugflow dev --node=kubelet` does. ' +
      `peer: its controller on the host (fresh process per run) with its own executor image (argoexec ${version}, built from the module) and the executor role its docs recommend; ` +
      `peer-tuned = \`${PEER_TUNED_ARGS.join(' ')}\` + ${Object.entries(PEER_TUNED_ENV)
        .map(([k, v]) => `${k}=${v}`)
        .join(' ')}. ` +
      "Writes: the API server's audit log by user (create/update/patch/delete of every resource): the controller's service account; the step pods' (the peer's wait container writes WorkflowTaskResults; plugflow's step pods carry no token); the kubelet's (pod status); every client but the bench's creates (the scheduler's bindings and the node's lease included). CPU: utime+stime from /proc over the run and 3 s after; above idle = less the controller's own CPU rate over 5 s idle just before (leader election, resyncs, probes). RSS: idle before the run, peak sampled every 100 ms.",
    '',
    table(runs, engines),
  ].join('\n');
  console.log(`\n${body}`);
  if (process.env.PEER_CPU_PROF) {
    console.log(`\nPEER_CPU_PROF set: figures not written to bench/RESULTS.md; plugflow's profile in ${process.env.PEER_CPU_PROF}`);
  } else {
    updateResultsSection('peer-node', 'Container steps on the real node, side by side with the peer (`make bench-peer-node`)', body);
    console.log('\nwritten to bench/RESULTS.md (section "peer-node")');
  }
  const bad = runs.filter((r) => r.succeeded < r.n);
  if (bad.length) {
    console.log(`runs where not every workflow Succeeded: ${bad.map((r) => `${r.engine} #${r.rep} (${r.succeeded}/${r.n})`).join('; ')}`);
    process.exitCode = 1;
  }
}

await main();
process.exit(process.exitCode ?? 0);
