/**
 * `make bench-peer`: plugflow's controller side by side with the peer's (Argo Workflows, built from
 * the Go module proxy by hack/build-peer.sh; its CRDs come from the module cache), on one local
 * control plane, on identical pod-less workflows (every node `suspend: {duration: "0"}`):
 * a 1-node workflow and a DAG a → b1..b8 → z, at 1, 200 and 1000 submitted at once.
 *
 * One controller runs at a time, each as its own process started fresh for the point (after a
 * settle, so start-up is not counted); engines alternate, and their order flips on every repeat.
 * Per run: workflows/min from the first create to the last Succeeded (seen by a watch), the
 * controller's CPU (utime+stime from /proc), its RSS (idle before the point, peak during it,
 * sampled every 100 ms) and its API writes per workflow (the API server's audit log, by user).
 * The peer runs twice: at its defaults and at its documented tuned settings (`--qps 1000
 * --burst 2000` and INFORMER_WRITE_BACK=true). The floor (bench/peer/floor-controller.ts) makes
 * plugflow's API traffic and nothing else, with the same client: the part of plugflow's CPU that is
 * the round trips themselves. A bare client then creates and status-patches
 * objects of the same size (no controller) as fast as the API server takes them: the bound
 * plugflow's throughput is reported against.
 *
 * Not part of `make bench` or `make test` (run-all.ts skips this file): it builds the peer.
 *
 *   PEER_POINTS=1,200,1000 PEER_REPEATS=2 PEER_SHAPES=1-node,dag PEER_ENGINES=plugflow,peer,peer-tuned,floor
 *   PEER_NOTE="..." (printed beside the figures, e.g. that the machine was busy)
 *   PEER_PLUGFLOW_ARGS="--workers 32" more flags for plugflow's controller (space-separated)
 *   PEER_CPU_PROF=DIR  plugflow's controller and the floor run with --cpu-prof into DIR (one profile per run;
 *                      summarise with `npx tsx bench/profile-summary.ts DIR/*.cpuprofile`); the
 *                      figures are then printed but not written to RESULTS.md (profiling slows it)
 */
import { KubeConfig } from '@kubernetes/client-node';
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ControlPlane, freePort } from '../src/devenv/control-plane.js';
import { installBase, REPO_ROOT } from '../src/devenv/dev-stack.js';
import { KubeClient } from '../src/kube/client.js';
import { CLUSTER_ROLE_BINDINGS } from '../src/kube/resource.js';
import { AuditLog, auditArgs } from './peer/audit.js';
import { ApiServerMeter, describeSide, planePids, type ApiServerSide } from './peer/api-server-side.js';
import { median, medianCell, ratio } from './peer/cells.js';
import { cpuProfArgs, installedNodeOptions } from './peer/installed-controller.js';
import { ControllerProcess, cpuSeconds, rssMiB, waitReady } from './peer/controller-process.js';
import { installPeer, PEER_TUNED_ARGS, PEER_TUNED_ENV, peerPaths, peerVersion } from './peer/peer-build.js';
import { baselinePoint, dropNamespace, runPoint, type Group, type Shape } from './peer/workloads.js';
import { machineDescription, updateResultsSection } from './run-all.js';

type Engine = 'plugflow' | 'peer' | 'peer-tuned' | 'floor';
const ENGINES: Engine[] = ['plugflow', 'peer', 'peer-tuned', 'floor'];
const USER: Record<Engine, string> = { plugflow: 'alice', peer: 'bob', 'peer-tuned': 'bob', floor: 'carol' };
const GROUP: Record<Engine, Group> = { plugflow: 'plugflow.io', peer: 'argoproj.io', 'peer-tuned': 'argoproj.io', floor: 'plugflow.io' };

interface Run {
  engine: Engine;
  shape: Shape;
  n: number;
  rep: number;
  perMinute: number;
  seconds: number;
  succeeded: number;
  failed: number;
  cpu: number;
  idleRss: number;
  peakRss: number;
  writesPerWorkflow: number;
  writesByResource: string;
  /** The API server's side of the run (api-server-side.ts). */
  side: ApiServerSide;
}

interface Baseline {
  shape: Shape;
  n: number;
  perMinute: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const envList = (name: string, fallback: string) =>
  (process.env[name] ?? fallback)
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

function controllerFor(engine: Engine, dir: string, kubeconfig: string, peerBin: string, metricsPort: number): ControllerProcess {
  const log = join(dir, `${engine}.log`);
  if (engine === 'plugflow') {
    return new ControllerProcess(
      engine,
      process.execPath,
      [
        ...cpuProfArgs(),
        join(REPO_ROOT, 'bin', 'plugflow.js'),
        'controller',
        '--kubeconfig',
        kubeconfig,
        '--metrics-port',
        String(metricsPort),
        ...(process.env.PEER_PLUGFLOW_ARGS ?? '').split(' ').filter(Boolean),
      ],
      installedNodeOptions(),
      log,
    );
  }
  if (engine === 'floor') {
    const script = join(REPO_ROOT, 'bench', 'peer', 'floor-controller.ts');
    return new ControllerProcess(
      engine,
      process.execPath,
      [...cpuProfArgs(), '--import', 'tsx', script, kubeconfig],
      installedNodeOptions(),
      log,
    );
  }
  const tuned = engine === 'peer-tuned';
  return new ControllerProcess(
    engine,
    peerBin,
    ['--kubeconfig', kubeconfig, ...(tuned ? PEER_TUNED_ARGS : [])],
    { LEADER_ELECTION_DISABLE: 'true', ...(tuned ? PEER_TUNED_ENV : {}) },
    log,
  );
}

/** One run of one engine at one point; also a finished workflow's status (the baseline's payload). */
async function measure(
  engine: Engine,
  shape: Shape,
  n: number,
  rep: number,
  ctx: { dir: string; client: KubeClient; audit: AuditLog; meter: ApiServerMeter; kubeconfigs: Record<Engine, string>; peerBin: string },
): Promise<{ run: Run; status: unknown }> {
  const port = await freePort();
  const proc = controllerFor(engine, ctx.dir, ctx.kubeconfigs[engine], ctx.peerBin, port);
  proc.start();
  try {
    if (engine === 'plugflow') await waitReady(`http://127.0.0.1:${port}/readyz`, 60_000);
    await sleep(5000); // informers synced, start-up work done: none of it is counted
    const idleRss = rssMiB(proc.pid);
    proc.takePeak();
    const cpu0 = cpuSeconds(proc.pid);
    const mark = ctx.audit.mark();
    const apiMark = await ctx.meter.mark();
    const ns = `peer-${engine}-${shape}-${n}-${rep}-${Date.now().toString(36)}`;
    const r = await runPoint(ctx.client, GROUP[engine], shape, n, ns, 20 * 60_000);
    await sleep(2000); // trailing writes (finish Events) belong to the run
    const cpu = cpuSeconds(proc.pid) - cpu0;
    const peakRss = proc.takePeak();
    const writes = ctx.audit.writesSince(mark);
    const user = USER[engine];
    const side = await ctx.meter.since(apiMark, writes.requests.get(user) ?? new Map());
    const mine = writes.byUser.get(user) ?? 0;
    const byResource = [...writes.byUserResource]
      .filter(([k]) => k.startsWith(`${user} `))
      .map(([k, v]) => `${k.slice(user.length + 1)} ${(v / Math.max(1, n)).toFixed(1)}`)
      .join(', ');
    await proc.stop();
    await dropNamespace(ctx.client, ns);
    const run: Run = {
      engine,
      shape,
      n,
      rep,
      perMinute: r.succeeded / (r.seconds / 60),
      seconds: r.seconds,
      succeeded: r.succeeded,
      failed: r.failed,
      cpu,
      idleRss,
      peakRss,
      writesPerWorkflow: mine / n,
      writesByResource: byResource,
      side,
    };
    console.log(
      `  ${engine} ${shape} ×${n} #${rep}: ${r.succeeded}/${n} Succeeded${r.failed ? ` (${r.failed} failed)` : ''} in ${r.seconds.toFixed(1)} s = ${run.perMinute.toFixed(0)}/min, CPU ${cpu.toFixed(2)} s, RSS idle ${idleRss.toFixed(0)} / peak ${peakRss.toFixed(0)} MiB, ${run.writesPerWorkflow.toFixed(1)} writes/wf (${byResource})\n    ${describeSide(side, n)}${r.sampleBytes ? `; a finished workflow ${r.sampleBytes.whole} bytes (managedFields ${r.sampleBytes.managedFields})` : ''}`,
    );
    return { run, status: r.sampleStatus };
  } finally {
    await proc.stop();
  }
}

function table(runs: Run[], baselines: Baseline[], engines: Engine[], shapes: Shape[], points: number[]): string {
  const lines = [
    `| shape | at once | figure | ${engines.join(' | ')} | plugflow / peer | plugflow / peer-tuned | floor / peer-tuned | plugflow / floor |`,
    `|---|---|---|${engines.map(() => '---|').join('')}---|---|---|---|`,
  ];
  const figures: { name: string; get: (r: Run) => number; d: number }[] = [
    { name: 'workflows/min', get: (r) => r.perMinute, d: 0 },
    { name: 'controller CPU (s)', get: (r) => r.cpu, d: 2 },
    { name: 'CPU ms per workflow', get: (r) => (1000 * r.cpu) / r.n, d: 2 },
    { name: 'writes per workflow', get: (r) => r.writesPerWorkflow, d: 1 },
    { name: 'API server CPU ms per workflow', get: (r) => (1000 * r.side.apiserverCpu) / r.n, d: 1 },
    { name: 'etcd CPU ms per workflow', get: (r) => (1000 * r.side.etcdCpu) / r.n, d: 1 },
    { name: 'idle RSS (MiB)', get: (r) => r.idleRss, d: 0 },
    { name: 'peak RSS (MiB)', get: (r) => r.peakRss, d: 0 },
  ];
  for (const shape of shapes) {
    for (const n of points) {
      const of = (e: Engine) => runs.filter((r) => r.engine === e && r.shape === shape && r.n === n);
      for (const f of figures) {
        const cells = engines.map((e) => medianCell(of(e).map(f.get), f.d));
        const m = (e: Engine) => median(of(e).map(f.get));
        lines.push(
          `| ${shape} | ${n} | ${f.name} | ${cells.join(' | ')} | ${ratio(m('plugflow'), m('peer'))} | ${ratio(m('plugflow'), m('peer-tuned'))} | ${ratio(m('floor'), m('peer-tuned'))} | ${ratio(m('plugflow'), m('floor'))} |`,
        );
      }
      const b = baselines.filter((x) => x.shape === shape && x.n === n).map((x) => x.perMinute);
      if (b.length) {
        const pf = median(of('plugflow').map((r) => r.perMinute));
        const cells = engines.map(() => '');
        cells[0] = medianCell(b);
        lines.push(
          `| ${shape} | ${n} | bare client (create + one patch of status and labels), objects/min | ${cells.join(' | ')} | plugflow at ${((100 * pf) / median(b)).toFixed(0)} % of it | | | |`,
        );
      }
    }
  }
  return lines.join('\n');
}

/**
 * The API server's side at the largest point, the first repeat of each engine: what each
 * controller asked of it by kind (per workflow, mean latency) and the watch traffic it caused.
 */
function sideTable(runs: Run[], engines: Engine[], shapes: Shape[], n: number): string {
  const lines = [
    `API server side at ${n} at once (first repeat): requests per workflow by kind (mean latency inside the API server, from the audit log), and watch events per workflow by kind (all watchers: the controller's and the bench's own; from the API server's metrics).`,
    '',
    '| shape | engine | API server / etcd CPU ms per wf | requests per wf by kind | watch events per wf |',
    '|---|---|---|---|---|',
  ];
  for (const shape of shapes)
    for (const e of engines) {
      const r = runs.find((x) => x.engine === e && x.shape === shape && x.n === n);
      if (!r) continue;
      const [cpu, requests, watch] = describeSide(r.side, n)
        .split('; ')
        .map((p) => p.replace(/^(requests\/wf|watch events\/wf) /, ''));
      lines.push(`| ${shape} | ${e} | ${cpu} | ${requests} | ${watch} |`);
    }
  return lines.join('\n');
}

async function main(): Promise<void> {
  const points = envList('PEER_POINTS', '1,200,1000').map(Number);
  const repeats = Number(process.env.PEER_REPEATS ?? 2);
  const shapes = envList('PEER_SHAPES', '1-node,dag') as Shape[];
  const engines = envList('PEER_ENGINES', ENGINES.join(',')) as Engine[];
  for (const e of engines) if (!ENGINES.includes(e)) throw new Error(`PEER_ENGINES: unknown engine "${e}" (one of ${ENGINES.join(', ')})`);
  const t0 = performance.now();
  const { bin: peerBin, crds } = peerPaths();
  const dir = join(REPO_ROOT, '.plugflow', `peer-bench-${Date.now()}`);
  mkdirSync(dir, { recursive: true });
  const plane = new ControlPlane({ dir: join(dir, 'control-plane'), apiServerArgs: auditArgs(dir), log: (l) => console.log(l) });
  await plane.start();
  const runs: Run[] = [];
  const baselines: Baseline[] = [];
  try {
    const admin = new KubeConfig();
    admin.loadFromFile(plane.kubeconfigPath);
    await installBase(admin, []);
    const client = await KubeClient.fromKubeConfig(admin);
    await installPeer(admin, client, crds);
    // Each engine acts as its own user, so the audit log tells their writes apart.
    for (const user of new Set(Object.values(USER))) {
      await client.create(CLUSTER_ROLE_BINDINGS, undefined, {
        metadata: { name: `bench-${user}` },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }],
      });
    }
    const kubeconfigs = {} as Record<Engine, string>;
    for (const e of ENGINES) {
      kubeconfigs[e] = join(dir, `${USER[e]}.kubeconfig`);
      writeFileSync(kubeconfigs[e], plane.kubeconfigYaml(plane.userTokens[USER[e]]!, USER[e]), { mode: 0o600 });
    }
    const meter = new ApiServerMeter(planePids(plane), client);
    const ctx = { dir, client, audit: new AuditLog(join(dir, 'audit.log')), meter, kubeconfigs, peerBin };
    for (const shape of shapes) {
      for (const n of points) {
        for (let rep = 1; rep <= repeats; rep++) {
          console.log(`${shape}, ${n} at once, repeat ${rep}`);
          const order = rep % 2 ? engines : [...engines].reverse();
          let status: unknown;
          for (const e of order) {
            const m = await measure(e, shape, n, rep, ctx);
            runs.push(m.run);
            if (e === 'plugflow') status = m.status;
          }
          if (status) {
            const ns = `peer-baseline-${shape}-${n}-${rep}-${Date.now().toString(36)}`;
            const b = await baselinePoint(client, 'plugflow.io', shape, n, ns, status);
            await dropNamespace(client, ns);
            console.log(
              `  bare client ${shape} ×${n} #${rep}: ${b.perMinute.toFixed(0)} objects/min (create + one patch of status and labels)`,
            );
            baselines.push({ shape, n, perMinute: b.perMinute });
          }
        }
      }
    }
    await client.close();
  } finally {
    await plane.stop();
  }
  const minutes = (performance.now() - t0) / 60_000;
  const date = new Date().toISOString().slice(0, 10);
  const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: REPO_ROOT, encoding: 'utf8' }).trim();
  const body = [
    `Machine: ${machineDescription()}. Date: ${date}. plugflow ${commit}; peer: Argo Workflows ${peerVersion(peerBin)} (hack/build-peer.sh). Took ${minutes.toFixed(1)} min.`,
    process.env.PEER_NOTE ? `\n**${process.env.PEER_NOTE}**` : '',
    '',
    `Command: \`${['PEER_POINTS', 'PEER_REPEATS', 'PEER_SHAPES', 'PEER_ENGINES', 'PEER_PLUGFLOW_ARGS']
      .filter((k) => process.env[k])
      .map((k) => `${k}=${process.env[k]!.includes(' ') ? `"${process.env[k]}"` : process.env[k]}`)
      .join(' ')} make bench-peer\`. ` +
      `Pod-less workflows (every node \`suspend: {duration: "0"}\`), all submitted at once (16 creates in flight); one controller at a time, fresh process per run, engines alternating. ` +
      `Cells: median (range) over ${repeats} run(s). peer-tuned = \`${PEER_TUNED_ARGS.join(' ')}\` + ${Object.entries(PEER_TUNED_ENV)
        .map(([k, v]) => `${k}=${v}`)
        .join(' ')}. ` +
      "Writes: the controller's user in the API server's audit log (create/update/patch/delete, every resource). CPU: utime+stime from /proc during the point. RSS: idle = 5 s after start, peak = sampled every 100 ms during the point. " +
      "Bare client: create + one status patch (a finished plugflow workflow's status) per object, 32 in flight, no controller. " +
      "floor = bench/peer/floor-controller.ts: the API traffic of plugflow for these workflows (list + watch, then per workflow the finished status, the phase labels and the Event, 8 in flight) made with plugflow's HTTP client and nothing else — no engine, cache, validation or logging; what any Node.js controller on this client pays. " +
      `plugflow and the floor run with the installed controller's NODE_OPTIONS (${installedNodeOptions().NODE_OPTIONS ?? 'none'}, manifests/base/controller.yaml).`,
    '',
    table(runs, baselines, engines, shapes, points),
    '',
    sideTable(runs, engines, shapes, Math.max(...points)),
  ].join('\n');
  console.log(`\n${body}`);
  if (process.env.PEER_CPU_PROF)
    console.log(`PEER_CPU_PROF set: figures not written to bench/RESULTS.md; profiles in ${process.env.PEER_CPU_PROF}`);
  else updateResultsSection('peer', 'Side by side with the peer (`make bench-peer`)', body);
  if (!process.env.PEER_CPU_PROF) console.log('\nwritten to bench/RESULTS.md (section "peer")');
  const bad = runs.filter((r) => r.succeeded < r.n);
  if (bad.length) {
    console.log(
      `runs where not every workflow Succeeded: ${bad.map((r) => `${r.engine} ${r.shape} ×${r.n} #${r.rep} (${r.succeeded}/${r.n})`).join('; ')}`,
    );
    process.exitCode = 1;
  }
}

await main();
process.exit(process.exitCode ?? 0);
