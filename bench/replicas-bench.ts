/**
 * Active-active controller replicas (`plugflow controller --sharding`, src/controller/sharding.ts),
 * measured against a control plane of the bench's own. Every replica is a process of its own
 * (`node --import tsx src/cli/main.ts controller --sharding`, its identity from POD_NAME, its
 * member Lease in the run's namespace, PLUGFLOW_NAMESPACE), so its CPU is its own: utime + stime
 * of /proc/<pid>/stat, read when all replicas are up and again when the last workflow finished.
 *
 * Each run creates `--workflows` (1,000) workflows of three sequential steps at once (32 creates
 * in flight) in a fresh namespace, whose step pods a "hollow node" completes as bench/engine-bench.ts
 * does (each pod reported Running, then Succeeded with the wait container's report, through
 * pods/status), so that the controllers are measured rather than the laptop's processes.
 *
 * 1. 1, 2 and 3 replicas: workflows per minute (create of the first → the last finished, as the
 *    bench's watch saw it); the replicas' CPU per workflow, all together and each one per workflow
 *    it owned (`status.controller`); the API server's CPU per workflow (the plane's kube-apiserver
 *    process, which also serves the hollow node's two pod status writes per pod and the bench's
 *    watches); and the 3-replica/1-replica throughput ratio.
 * 2. Chaos: 3 replicas; every ~8 s (the first 4 s after the creates) one random replica is
 *    SIGKILLed and a new one with a fresh identity started (only once the last one started holds
 *    its Lease, so 2–3 are alive at all times), until every workflow finished. Checked: every
 *    workflow Succeeded (after a generous timeout the unfinished ones are listed with the
 *    replicas' log lines about them, and the bench exits non-zero); no pod created twice (every
 *    pod name seen ADDED by a watch from the start with exactly one uid, and the step pods number
 *    3 × workflows); each workflow's three step nodes Succeeded in order (the pod of step i+1
 *    created — by resourceVersion — after the hollow node reported step i's pod Succeeded, and
 *    started no earlier than step i finished). Measured: the hand-over, for each workflow the
 *    killed replica held (`status.controller`) and had not finished at the kill, from the kill to
 *    the first write of it by another replica; max and median. Beside it, from the member Leases
 *    the bench watched, the earliest each could have moved by the replicas' own views of the ring
 *    (modelHandOver), and how many moved more than 10 s after that.
 *
 * Every run also gets the duplicate, order and stuck checks (in its figures' notes).
 *
 *   npx tsx bench/replicas-bench.ts [--workflows 1000]
 *
 * REPLICAS_KILL_EVERY_MS=25000: the chaos run's period between kills (default 8000).
 *
 * To look into a run: REPLICAS_BENCH_RUNS=chaos (a comma list of r1, r2, r3, chaos),
 * REPLICAS_BENCH_LOG_LEVEL=info (the replicas' PLUGFLOW_LOG_LEVEL, default warn) and
 * REPLICAS_BENCH_LOGS=DIR (each replica's log in DIR/<namespace>-<replica>.log).
 */
import { KubeConfig } from '@kubernetes/client-node';
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import {
  FINAL_WORKFLOW_PHASES,
  inflateWorkflow,
  LABEL_COMPONENT,
  LABEL_NODE_ID,
  LABEL_WORKFLOW,
  type NodeStatus,
  type Workflow,
} from '../src/api/index.js';
import { LABEL_CONTROLLER_MEMBER } from '../src/controller/shard-members.js';
import { ShardRing } from '../src/controller/shard-ring.js';
import { ControlPlane } from '../src/devenv/control-plane.js';
import { KubeClient } from '../src/kube/client.js';
import type { WatchEvent } from '../src/kube/request-options.js';
import { LEASES, NAMESPACES, PODS, SERVICE_ACCOUNTS, WORKFLOWS, type ResourceType } from '../src/kube/resource.js';
import { applyCrds } from '../test/support/apply.js';
import { HollowNode } from './hollow-node.js';
import { percentile, printFigures, type Figure } from './figures.js';
import { planePids } from './peer/api-server-side.js';
import { cpuSeconds } from './peer/controller-process.js';

const REPO = resolve(import.meta.dirname, '..');
const STEPS = 3;
/**
 * How often the chaos run kills a replica (REPLICAS_KILL_EVERY_MS). At 8 s, less than a member
 * Lease, a share often moves to a replica that is itself killed before it serves it, so a
 * workflow's wait spans several kills; at 25 s each kill's hand-over is over before the next.
 */
const KILL_EVERY_MS = Number(process.env.REPLICAS_KILL_EVERY_MS ?? 8_000);
/**
 * A write that finishes a workflow still naming the killed replica, this soon after the kill, is
 * that replica's own last write, still on its way: no other replica takes a workflow over before
 * the killed one's Lease expired (15 s after its last renewal, at most 2 s before the kill).
 */
const OWN_WRITES_MS = 10_000;
/** The member Leases' duration (shard-members.ts's default). */
const LEASE_MS = 15_000;
/** A hand-over this much later than the new owner's view allowed it (modelHandOver) is counted as late. */
const UNEXPLAINED_MS = 10_000;
/** How long a new owner takes at most to see that it owns a workflow and that its holder is gone. */
const DETECT_MS = 4_000;
const arg = (name: string, def: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : def;
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const LOG_LEVEL = process.env.REPLICAS_BENCH_LOG_LEVEL ?? 'warn';
const LOG_DIR = process.env.REPLICAS_BENCH_LOGS;
const RUNS = (process.env.REPLICAS_BENCH_RUNS ?? 'r1,r2,r3,chaos').split(',');
const isFinal = (phase: string | undefined) => (FINAL_WORKFLOW_PHASES as readonly string[]).includes(phase ?? '');

/** A workflow of `STEPS` sequential steps s0, s1, …, each a container (completed by the hollow node). */
function chain(name: string): Workflow {
  return {
    apiVersion: 'plugflow.io/v1alpha1',
    kind: 'Workflow',
    metadata: { name },
    spec: {
      entrypoint: 'main',
      templates: [
        { name: 'main', steps: Array.from({ length: STEPS }, (_, i) => [{ name: `s${i}`, template: 'work' }]) },
        { name: 'work', container: { image: 'alpine:3', command: ['true'] } },
      ],
    },
  } as Workflow;
}

/** CPU seconds a process used so far (controller-process.ts); undefined once it is gone (a killed replica). */
function cpuSecondsIfAlive(pid: number | undefined): number | undefined {
  if (!pid) return undefined;
  try {
    return cpuSeconds(pid);
  } catch {
    return undefined;
  }
}

/**
 * A watch that keeps going: after the server closes it or it fails, it watches again from the
 * last resourceVersion seen (so nothing is missed); after "too old" (410) it lists again, and the
 * listed objects come as type LISTED.
 */
async function keepWatching(
  client: KubeClient,
  type: ResourceType,
  namespace: string,
  onEvent: (type: WatchEvent['type'] | 'LISTED', object: Record<string, unknown>) => void,
  signal: AbortSignal,
): Promise<void> {
  let rv: string | undefined;
  while (!signal.aborted) {
    try {
      if (rv === undefined) {
        const list = await client.list<Record<string, unknown>>(type, { namespace });
        for (const o of list.items) onEvent('LISTED', o);
        rv = list.metadata.resourceVersion;
      }
      await client.watch(
        type,
        { namespace, resourceVersion: rv, allowWatchBookmarks: true },
        (e) => {
          if (e.type === 'ERROR') {
            if ((e.object as { code?: number }).code === 410) rv = undefined;
            return;
          }
          const v = (e.object.metadata as { resourceVersion?: string } | undefined)?.resourceVersion;
          if (v) rv = v;
          if (e.type !== 'BOOKMARK') onEvent(e.type, e.object);
        },
        signal,
      );
    } catch {
      if (!signal.aborted) await sleep(200);
    }
  }
}

/** One `plugflow controller --sharding` process. */
class Replica {
  readonly child: ChildProcess;
  readonly exited: Promise<void>;
  private err = '';

  constructor(
    readonly id: string,
    kubeconfigPath: string,
    namespace: string,
  ) {
    this.child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        join(REPO, 'src/cli/main.ts'),
        'controller',
        '--kubeconfig',
        kubeconfigPath,
        '--namespace',
        namespace,
        '--sharding',
        '--metrics-port',
        '0',
        '--no-events',
      ],
      {
        cwd: REPO,
        stdio: ['ignore', 'ignore', 'pipe'],
        env: { ...process.env, POD_NAME: id, PLUGFLOW_NAMESPACE: namespace, PLUGFLOW_LOG_LEVEL: LOG_LEVEL },
      },
    );
    if (LOG_DIR) {
      mkdirSync(LOG_DIR, { recursive: true });
      this.child.stderr?.pipe(createWriteStream(join(LOG_DIR, `${namespace}-${id}.log`)));
    }
    this.child.stderr?.on('data', (d: Buffer) => {
      this.err += d.toString();
      if (this.err.length > 4_000_000) this.err = this.err.slice(-2_000_000);
    });
    this.exited = new Promise((r) => this.child.once('exit', () => r()));
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  cpu(): number | undefined {
    return cpuSecondsIfAlive(this.child.pid);
  }

  stderr(): string {
    return this.err;
  }

  /** SIGTERM (a clean stop: it deletes its Lease), SIGKILL after 30 s. */
  async stop(): Promise<void> {
    if (!this.alive) return;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 30_000);
    await this.exited;
    clearTimeout(timer);
  }
}

/** Waits until each of `ids` holds a member Lease in `namespace`. */
async function waitForMembers(client: KubeClient, namespace: string, ids: string[], timeoutMs: number, logs: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const leases = await client.list<{ spec?: { holderIdentity?: string } }>(LEASES, {
      namespace,
      labelSelector: `${LABEL_CONTROLLER_MEMBER}=true`,
    });
    const holders = new Set(leases.items.map((l) => l.spec?.holderIdentity));
    if (ids.every((id) => holders.has(id))) return;
    if (Date.now() > deadline)
      throw new Error(`replicas ${ids.join(', ')} did not all take a member Lease in ${timeoutMs / 1000} s\n${logs()}`);
    await sleep(250);
  }
}

/**
 * When a workflow held by a killed replica could have been taken over at the earliest, by the
 * rules of shard-members.ts and sharding.ts applied to the Lease changes the bench saw. Each
 * replica judges a member live while its Lease exists and it saw it change within the lease
 * duration *by its own clock, from its own first list on* — so a replica that just started counts
 * every Lease it lists as live for its first 15 s, a long-dead replica's too unless a replica
 * removed it (replicas remove the Leases they saw expire since commit 0ea37c1). A replica takes the
 * workflow over once, in its own view, the killed holder is no longer live and the ring of its
 * live members gives the workflow to itself: `ms`, the first moment that is so for a running
 * replica; `stableMs`, the first moment it has been so for one running replica for `DETECT_MS`
 * (its lists of the Leases and its looks at the holder come every 2 s, so by then it must have
 * acted). Also the owners the workflow had on the ring of a replica that saw everything from the
 * start (the bench's own view).
 */
function modelHandOver(
  key: string,
  victim: string,
  killAt: number,
  until: number,
  leaseChanges: Map<string, number[]>,
  leaseDeleted: Map<string, number>,
  killedAt: Map<string, number>,
  rings: Map<string, ShardRing>,
): { ms?: number; stableMs?: number; owners: string[] } {
  const ids = [...leaseChanges.keys()];
  const started = (id: string) => leaseChanges.get(id)![0]!;
  /** The last change of `id`'s Lease at or before `t`. */
  const lastChange = (id: string, t: number): number | undefined => {
    const times = leaseChanges.get(id)!;
    let lo = 0;
    let hi = times.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (times[mid]! <= t) lo = mid + 1;
      else hi = mid;
    }
    return lo > 0 ? times[lo - 1] : undefined;
  };
  /** Whether `member` is live at `t` in the view of a replica that first listed at `since`. */
  const liveFor = (since: number, member: string, t: number) => {
    const c = lastChange(member, t);
    return c !== undefined && (leaseDeleted.get(member) ?? Infinity) > t && t - Math.max(c, since) <= LEASE_MS;
  };
  const ringOf = (members: string[]) => {
    const k = members.join(',');
    let ring = rings.get(k);
    if (!ring) rings.set(k, (ring = new ShardRing(members)));
    return ring;
  };
  const owners: string[] = [];
  let first: number | undefined;
  let holding: { t: number; replica: string } | undefined;
  for (let t = killAt; t <= until; t += 250) {
    const seenByAll = ringOf(ids.filter((m) => liveFor(-Infinity, m, t)).sort()).ownerOf(key);
    if (seenByAll && owners.at(-1) !== seenByAll) owners.push(seenByAll);
    let taker: string | undefined;
    for (const r of ids) {
      if (started(r) > t || (killedAt.get(r) ?? Infinity) <= t) continue;
      const view = ids.filter((m) => m === r || liveFor(started(r), m, t)).sort();
      if (!view.includes(victim) && ringOf(view).ownerOf(key) === r) {
        taker = r;
        break;
      }
    }
    if (taker) first ??= t - killAt;
    if (!taker) holding = undefined;
    else if (holding?.replica !== taker) holding = { t, replica: taker };
    else if (t - holding.t >= DETECT_MS) return { ms: first, stableMs: t - killAt, owners };
  }
  return { ...(first !== undefined ? { ms: first } : {}), owners };
}

interface WorkflowState {
  phase: string;
  controller?: string;
  /** performance.now() when the bench saw it finished. */
  finishedAt?: number;
}

interface HandOver {
  kill: number;
  workflow: string;
  ms: number;
  by: string;
  /** When the replica that held it was killed (bench clock). */
  killAt: number;
  /** The earliest the replicas' views allowed it (modelHandOver), and its owners on a full view. */
  modelMs?: number;
  /** The first moment one running replica had been allowed it for DETECT_MS (modelHandOver). */
  stableMs?: number;
  owners?: string[];
}

interface RunResult {
  label: string;
  replicas: number;
  total: number;
  chaos: boolean;
  seconds: number;
  perMinute: number;
  /** Replica → CPU seconds during the run (only the replicas that lived through it). */
  cpu: Map<string, number>;
  /** Replica → workflows whose final `status.controller` names it. */
  owned: Map<string, number>;
  apiserverCpu: number;
  etcdCpu: number;
  succeeded: number;
  unfinished: string[];
  duplicates: string[];
  stepPods: number;
  outOfOrder: string[];
  kills: { victim: string; orphans: number }[];
  handOvers: HandOver[];
  /** Workflows held by a killed replica that no other replica ever wrote. */
  neverTaken: string[];
  /** Held by a killed replica and finished by its own last write, still on its way at the kill. */
  finishedByKilled: number;
  /** Why the chaos stopped early, if it did. */
  chaosError?: string;
}

interface Bench {
  plane: ControlPlane;
  client: KubeClient;
  pids: { apiserver: number; etcd: number };
}

async function run(bench: Bench, label: string, replicaCount: number, total: number, chaos: boolean): Promise<RunResult> {
  const { plane, client, pids } = bench;
  const namespace = `replicas-${label}`;
  await client.create(NAMESPACES, undefined, { metadata: { name: namespace } });
  for (let i = 0; ; i++) {
    if (
      await client.get(SERVICE_ACCOUNTS, namespace, 'default').then(
        () => true,
        () => false,
      )
    )
      break;
    if (i > 300) throw new Error(`no default service account in ${namespace}`);
    await sleep(100);
  }

  const names = Array.from({ length: total }, (_, i) => `wf-${i}`);
  const stopWatching = new AbortController();
  const state = new Map<string, WorkflowState>();
  /** Pod name → every uid it was seen ADDED with. */
  const podUids = new Map<string, Set<string>>();
  /** Pod name → its workflow, node id, role and (seen ADDED from the watch) creation resourceVersion. */
  const pods = new Map<string, { workflow: string; nodeId: string; component: string; createdRv?: bigint }>();
  /** Workflow → the kills whose hand-over of it is not seen yet. */
  const awaitingHandOver = new Map<string, { kill: number; victim: string; at: number }[]>();
  const handOvers: HandOver[] = [];
  /** Workflows the killed replica itself finished, by a write still on its way at the kill. */
  const finishedByKilled: string[] = [];
  const kills: { victim: string; orphans: number }[] = [];
  /** Member → when (bench clock) its Lease was seen changing, and removed; replica → when it was killed. */
  const leaseChanges = new Map<string, number[]>();
  const leaseDeleted = new Map<string, number>();
  const killedAt = new Map<string, number>();
  const onLease = (type: string, object: Record<string, unknown>) => {
    const lease = object as { metadata?: { labels?: Record<string, string> }; spec?: { holderIdentity?: string } };
    const id = lease.spec?.holderIdentity;
    if (!id || lease.metadata?.labels?.[LABEL_CONTROLLER_MEMBER] !== 'true') return;
    if (type === 'DELETED') leaseDeleted.set(id, Date.now());
    else leaseChanges.set(id, [...(leaseChanges.get(id) ?? []), Date.now()]);
  };

  const onWorkflow = (type: string, object: Record<string, unknown>) => {
    const wf = object as unknown as Workflow;
    const name = wf.metadata?.name;
    if (!name || type === 'DELETED') return;
    const phase = wf.status?.phase ?? '';
    const controller = wf.status?.controller;
    const previous = state.get(name);
    state.set(name, {
      phase,
      controller,
      finishedAt: previous?.finishedAt ?? (isFinal(phase) ? performance.now() : undefined),
    });
    const waiting = awaitingHandOver.get(name);
    if (!waiting || type === 'ADDED') return;
    const now = Date.now();
    const left = waiting.filter((w) => {
      // Another replica's stamp is a take-over; so is the write that finishes the workflow (a
      // finished workflow is not stamped) unless it is the killed one's own, still on its way.
      const byOther = controller !== undefined && controller !== w.victim;
      if (!byOther && isFinal(phase) && now < w.at + OWN_WRITES_MS) {
        finishedByKilled.push(name);
        return false;
      }
      const taken = byOther || isFinal(phase);
      if (taken)
        handOvers.push({
          kill: w.kill,
          workflow: name,
          ms: now - w.at,
          by: controller === w.victim ? '(its finishing write)' : (controller ?? '(released)'),
          killAt: w.at,
        });
      return !taken;
    });
    if (left.length) awaitingHandOver.set(name, left);
    else awaitingHandOver.delete(name);
  };
  const onPod = (type: string, object: Record<string, unknown>) => {
    const md = object.metadata as { name?: string; uid?: string; resourceVersion?: string; labels?: Record<string, string> } | undefined;
    if ((type !== 'ADDED' && type !== 'LISTED') || !md?.name || !md.uid) return;
    const uids = podUids.get(md.name) ?? new Set<string>();
    uids.add(md.uid);
    podUids.set(md.name, uids);
    if (!pods.has(md.name))
      pods.set(md.name, {
        workflow: md.labels?.[LABEL_WORKFLOW] ?? '',
        nodeId: md.labels?.[LABEL_NODE_ID] ?? '',
        component: md.labels?.[LABEL_COMPONENT] ?? '',
        ...(type === 'ADDED' && md.resourceVersion ? { createdRv: BigInt(md.resourceVersion) } : {}),
      });
  };
  const watching = [
    keepWatching(client, WORKFLOWS, namespace, onWorkflow, stopWatching.signal),
    keepWatching(client, PODS, namespace, onPod, stopWatching.signal),
    keepWatching(client, LEASES, namespace, onLease, stopWatching.signal),
  ];
  const hollow = new HollowNode(client, namespace);
  hollow.start();

  const replicas = new Map<string, Replica>();
  let next = 0;
  const startReplica = (): string => {
    const id = `replica-${next++}`;
    replicas.set(id, new Replica(id, plane.kubeconfigPath, namespace));
    return id;
  };
  const logs = (filter?: (line: string) => boolean, tail = 3_000) =>
    [...replicas.values()]
      .map((r) => {
        const text = filter ? r.stderr().split('\n').filter(filter).slice(-40).join('\n') : r.stderr().slice(-tail);
        return `--- ${r.id} (${r.alive ? 'alive' : `exited ${r.child.exitCode ?? r.child.signalCode}`})\n${text}`;
      })
      .join('\n');

  let chaosOn = chaos;
  let chaosError: string | undefined;
  try {
    const first = Array.from({ length: replicaCount }, startReplica);
    await waitForMembers(client, namespace, first, 180_000, () => logs());
    // Each lists the members every 2 s: let all of them see all the others before the load.
    await sleep(5_000);
    const cpuBefore = new Map(first.map((id) => [id, replicas.get(id)!.cpu() ?? 0]));
    const apiBefore = cpuSecondsIfAlive(pids.apiserver) ?? 0;
    const etcdBefore = cpuSecondsIfAlive(pids.etcd) ?? 0;

    console.log(`[replicas] ${label}: ${replicaCount} replica(s) up; creating ${total} workflows in ${namespace}`);
    const t0 = performance.now();
    const pending = [...names];
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        for (let name = pending.shift(); name; name = pending.shift()) await client.create(WORKFLOWS, namespace, chain(name));
      }),
    );
    const submitted = (performance.now() - t0) / 1000;

    // Chaos: every ~8 s a random replica is killed and a fresh one started.
    const killer = (async () => {
      // The first kill half a period after the creates, so that a small run sees kills too.
      let lastKill = Date.now() - KILL_EVERY_MS / 2;
      while (chaosOn) {
        await sleep(Math.max(0, lastKill + KILL_EVERY_MS - Date.now()));
        if (!chaosOn) break;
        const alive = [...replicas.values()].filter((r) => r.alive);
        // The one started last must be up (hold its Lease) before another goes: 2–3 alive at all times.
        await waitForMembers(
          client,
          namespace,
          alive.map((r) => r.id),
          180_000,
          () => logs(),
        );
        if (!chaosOn) break;
        const victim = alive[Math.floor(Math.random() * alive.length)]!;
        const orphans = [...state].filter(([, s]) => s.controller === victim.id && !isFinal(s.phase)).map(([n]) => n);
        const at = Date.now();
        victim.child.kill('SIGKILL');
        killedAt.set(victim.id, at);
        await victim.exited;
        const kill = kills.length;
        kills.push({ victim: victim.id, orphans: orphans.length });
        for (const name of orphans) awaitingHandOver.set(name, [...(awaitingHandOver.get(name) ?? []), { kill, victim: victim.id, at }]);
        const fresh = startReplica();
        console.log(
          `[replicas] ${label}: killed ${victim.id} (held ${orphans.length} unfinished), started ${fresh}; ${[...state.values()].filter((s) => s.finishedAt !== undefined).length}/${total} finished`,
        );
        lastKill = at;
      }
    })().catch((err: Error) => {
      chaosError = err.message.split('\n')[0];
      console.error(`\n[replicas] ${label}: FAILED: the chaos stopped: ${err.message}`);
    });

    // Until every workflow finished, or a generous timeout.
    const timeoutMs = Math.max(900_000, total * 1_200);
    const deadline = performance.now() + timeoutMs;
    let lastReport = performance.now();
    for (;;) {
      const done = names.filter((n) => state.get(n)?.finishedAt !== undefined).length;
      if (done === total || performance.now() > deadline) break;
      if (performance.now() - lastReport > 30_000) {
        lastReport = performance.now();
        console.log(`[replicas] ${label}: ${done}/${total} finished after ${((lastReport - t0) / 1000).toFixed(0)} s`);
      }
      await sleep(100);
    }
    const finishedTimes = names.map((n) => state.get(n)?.finishedAt).filter((t): t is number => t !== undefined);
    const seconds = ((finishedTimes.length ? Math.max(...finishedTimes) : performance.now()) - t0) / 1000;
    const cpu = new Map<string, number>();
    for (const [id, before] of cpuBefore) {
      const now = replicas.get(id)!.cpu();
      if (now !== undefined) cpu.set(id, now - before);
    }
    const apiserverCpu = (cpuSecondsIfAlive(pids.apiserver) ?? 0) - apiBefore;
    const etcdCpu = (cpuSecondsIfAlive(pids.etcd) ?? 0) - etcdBefore;
    chaosOn = false;
    await killer;
    await sleep(2_000); // the last pod events and write of each workflow

    // The truth, from the API server.
    const items = (await client.list<Workflow>(WORKFLOWS, { namespace })).items.map((wf) => inflateWorkflow(wf));
    const byName = new Map(items.map((wf) => [wf.metadata.name!, wf]));
    const unfinished = names.filter((n) => !isFinal(byName.get(n)?.status?.phase));
    const succeeded = names.filter((n) => byName.get(n)?.status?.phase === 'Succeeded').length;
    if (unfinished.length || succeeded < total) {
      console.error(
        `\n[replicas] ${label}: FAILED: ${unfinished.length} of ${total} workflows unfinished after ${(timeoutMs / 1000).toFixed(0)} s, ${total - succeeded - unfinished.length} finished but not Succeeded`,
      );
      for (const n of names.filter((x) => byName.get(x)?.status?.phase !== 'Succeeded')) {
        const wf = byName.get(n);
        console.error(
          `  ${n}: phase ${wf?.status?.phase ?? '(none)'}, status.controller ${wf?.status?.controller ?? '(none)'}, resourceVersion ${wf?.metadata.resourceVersion}; nodes ${Object.values(
            wf?.status?.nodes ?? {},
          )
            .map((node) => `${node.displayName}=${node.phase}`)
            .join(' ')}`,
        );
      }
      const stuckNames = unfinished.slice(0, 20);
      console.error(
        `replicas' log lines naming them:\n${logs((line) => stuckNames.some((n) => line.includes(`/${n}"`) || line.includes(`${n}-`)))}`,
      );
      console.error(`replicas' last log lines:\n${logs(undefined, 4_000)}`);
      const leases = await client.list<{ spec?: { holderIdentity?: string; renewTime?: string } }>(LEASES, { namespace });
      console.error(`leases: ${leases.items.map((l) => `${l.spec?.holderIdentity}@${l.spec?.renewTime}`).join(', ')}`);
    }

    const owned = new Map<string, number>();
    for (const wf of items) {
      const c = wf.status?.controller ?? '(none)';
      owned.set(c, (owned.get(c) ?? 0) + 1);
    }
    const duplicates = [...podUids].filter(([, uids]) => uids.size > 1).map(([n, uids]) => `${n} (${uids.size} uids)`);
    const stepPods = [...pods.values()].filter((p) => p.component !== 'agent').length;

    // Each workflow's steps: one Succeeded Pod node each, in order.
    const podOf = new Map<string, string>();
    for (const [podName, p] of pods) podOf.set(`${p.workflow}/${p.nodeId}`, podName);
    const outOfOrder: string[] = [];
    for (const n of names) {
      const wf = byName.get(n);
      const nodes = Object.values(wf?.status?.nodes ?? {});
      const steps: NodeStatus[] = [];
      const problems: string[] = [];
      for (let i = 0; i < STEPS; i++) {
        const of = nodes.filter((node) => node.displayName === `s${i}` && node.type === 'Pod');
        if (of.length !== 1) problems.push(`s${i}: ${of.length} nodes`);
        else if (of[0]!.phase !== 'Succeeded') problems.push(`s${i}: ${of[0]!.phase}`);
        if (of[0]) steps.push(of[0]);
      }
      for (let i = 1; i < steps.length; i++) {
        const [a, b] = [steps[i - 1]!, steps[i]!];
        if (a.finishedAt && b.startedAt && Date.parse(b.startedAt) < Date.parse(a.finishedAt))
          problems.push(`${b.displayName} started ${b.startedAt} before ${a.displayName} finished ${a.finishedAt}`);
        const donePod = podOf.get(`${n}/${a.id}`);
        const nextPod = podOf.get(`${n}/${b.id}`);
        const doneRv = donePod ? hollow.succeededRv.get(donePod) : undefined;
        const createdRv = nextPod ? pods.get(nextPod)?.createdRv : undefined;
        if (doneRv !== undefined && createdRv !== undefined && createdRv <= doneRv)
          problems.push(
            `pod of ${b.displayName} created (rv ${createdRv}) before ${a.displayName}'s pod was reported Succeeded (rv ${doneRv})`,
          );
      }
      if (problems.length) outOfOrder.push(`${n}: ${problems.join('; ')}`);
    }
    if (duplicates.length || outOfOrder.length || stepPods !== STEPS * total)
      console.error(
        `\n[replicas] ${label}: FAILED: ${duplicates.length} pod(s) created twice [${duplicates.slice(0, 20).join(', ')}]; ${stepPods} step pods for ${STEPS * total} steps; ${outOfOrder.length} workflow(s) out of order:\n  ${outOfOrder.slice(0, 20).join('\n  ')}`,
      );
    const neverTaken = [...awaitingHandOver].map(([n, w]) => `${n} (from ${w.map((x) => x.victim).join(', ')})`);
    const rings = new Map<string, ShardRing>();
    for (const h of handOvers) {
      const m = modelHandOver(
        `${namespace}/${h.workflow}`,
        kills[h.kill]!.victim,
        h.killAt,
        h.killAt + h.ms + 15_000,
        leaseChanges,
        leaseDeleted,
        killedAt,
        rings,
      );
      h.owners = m.owners;
      if (m.ms !== undefined) h.modelMs = m.ms;
      if (m.stableMs !== undefined) h.stableMs = m.stableMs;
    }
    // Later than the new owner's own view allowed: its queue (every replica that gains a dead
    // one's share gets hundreds of workflows at once), or it was killed before it got to it.
    const late = handOvers.filter((h) => h.stableMs !== undefined && h.ms > h.stableMs + UNEXPLAINED_MS);
    const lateness = (h: HandOver) => h.ms - (h.stableMs ?? h.ms);
    if (late.length) {
      console.log(
        `[replicas] ${label}: ${late.length} hand-over(s) more than ${UNEXPLAINED_MS / 1000} s after a running replica's own view had allowed them for ${DETECT_MS / 1000} s; the latest:`,
      );
      for (const h of [...late].sort((x, y) => lateness(y) - lateness(x)).slice(0, 5))
        console.log(
          `  ${h.workflow}: killed ${kills[h.kill]?.victim}, first write by another replica after ${(h.ms / 1000).toFixed(1)} s (by ${h.by}); a replica's own view allowed it from ${((h.modelMs ?? 0) / 1000).toFixed(1)} s, for ${DETECT_MS / 1000} s on end from ${((h.stableMs ?? 0) / 1000).toFixed(1)} s; owners on a full view ${h.owners?.join(' → ')}`,
        );
    }

    console.log(
      `[replicas] ${label}: ${total} workflows in ${seconds.toFixed(1)} s (submission ${submitted.toFixed(1)} s), ${succeeded} Succeeded; CPU ${cpu.size ? [...cpu].map(([id, s]) => `${id} ${s.toFixed(1)} s`).join(', ') : '(the first replicas were killed)'}; API server ${apiserverCpu.toFixed(1)} s, etcd ${etcdCpu.toFixed(1)} s`,
    );
    return {
      label,
      replicas: replicaCount,
      total,
      chaos,
      seconds,
      perMinute: (total / seconds) * 60,
      cpu,
      owned,
      apiserverCpu,
      etcdCpu,
      succeeded,
      unfinished,
      duplicates,
      stepPods,
      outOfOrder,
      kills,
      handOvers,
      neverTaken,
      finishedByKilled: finishedByKilled.length,
      ...(chaosError ? { chaosError } : {}),
    };
  } finally {
    chaosOn = false;
    await Promise.all([...replicas.values()].map((r) => r.stop()));
    await hollow.stop();
    stopWatching.abort();
    await Promise.all(watching);
  }
}

const round = (x: number, digits = 3) => Number(x.toPrecision(digits));

/** Whether a run was correct: everything Succeeded, no pod twice, every step once and in order. */
function checks(r: RunResult): string {
  return `${r.succeeded}/${r.total} Succeeded, ${r.duplicates.length} pods created twice, ${r.stepPods}/${STEPS * r.total} step pods, ${r.outOfOrder.length} out of order`;
}
const correct = (r: RunResult) =>
  r.succeeded === r.total && r.duplicates.length === 0 && r.stepPods === STEPS * r.total && r.outOfOrder.length === 0;

function figuresOf(runs: RunResult[], chaos: RunResult | undefined): Figure[] {
  const out: Figure[] = [];
  const cores = cpus().length;
  for (const r of runs) {
    out.push({
      name: `${r.replicas} replica(s) --sharding: ${r.total} three-step workflows created at once, throughput`,
      value: round(r.perMinute),
      unit: 'workflows/min',
      goal: 'reported',
      met: correct(r),
      note: `create of the first → last finished ${r.seconds.toFixed(1)} s; ${checks(r)}; pods completed by a hollow node`,
    });
  }
  for (const r of runs) {
    const total = [...r.cpu.values()].reduce((a, b) => a + b, 0);
    const each = [...r.cpu]
      .map(([id, s]) => {
        const owned = r.owned.get(id) ?? 0;
        return `${id} ${s.toFixed(1)} s = ${(s / r.total).toFixed(4)} s/workflow of all, owned ${owned} → ${owned ? (s / owned).toFixed(4) : '-'} s/owned workflow`;
      })
      .join('; ');
    const perOwned = [...r.cpu].map(([id, s]) => s / Math.max(1, r.owned.get(id) ?? 0));
    out.push(
      {
        name: `${r.replicas} replica(s): controller CPU per workflow, all replicas together`,
        value: round(total / r.total),
        unit: 's',
        goal: 'reported',
        met: correct(r),
        note: `${total.toFixed(1)} s of CPU for ${r.total} workflows`,
      },
      {
        name: `${r.replicas} replica(s): controller CPU per workflow a replica owned, mean of the replicas`,
        value: round(perOwned.reduce((a, b) => a + b, 0) / Math.max(1, perOwned.length)),
        unit: 's',
        goal: 'reported',
        met: correct(r),
        note: `owned = its name in the final status.controller; ${each}`,
      },
    );
  }
  for (const r of runs) {
    out.push({
      name: `${r.replicas} replica(s): API server CPU per workflow`,
      value: round(r.apiserverCpu / r.total),
      unit: 's',
      goal: 'reported',
      met: correct(r),
      note: `kube-apiserver ${r.apiserverCpu.toFixed(1)} s, etcd ${r.etcdCpu.toFixed(1)} s (${(r.etcdCpu / r.total).toFixed(4)} s/workflow); includes the hollow node's 2 pod status writes per pod and the bench's watches`,
    });
  }
  const one = runs.find((r) => r.replicas === 1);
  const three = runs.find((r) => r.replicas === 3);
  if (one && three)
    out.push({
      name: 'throughput of 3 replicas / 1 replica',
      value: round(three.perMinute / one.perMinute),
      unit: '×',
      goal: 'reported',
      met: correct(one) && correct(three),
      note: `${round(three.perMinute)} vs ${round(one.perMinute)} workflows/min; on this ${cores}-core machine the API server, etcd, the hollow node and every replica share the same CPUs, so more replicas add no CPU here — every replica also watches every workflow, and the pods of its own buckets; the ratio shows sharding's overhead, not the scaling a cluster with a core per replica would see`,
    });

  if (!chaos) return out;
  const ms = chaos.handOvers.map((h) => h.ms);
  const perKill = chaos.kills.map((k, i) => {
    const of = chaos.handOvers.filter((h) => h.kill === i).map((h) => h.ms);
    return `${k.victim}: ${k.orphans} held${of.length ? `, max ${(Math.max(...of) / 1000).toFixed(1)} s` : ''}`;
  });
  const max = ms.length ? Math.max(...ms) / 1000 : 0;
  const median = ms.length ? percentile(ms, 50) / 1000 : 0;
  const modelled = chaos.handOvers.map((h) => h.modelMs).filter((x): x is number => x !== undefined);
  const late = chaos.handOvers.filter((h) => h.stableMs !== undefined && h.ms > h.stableMs + UNEXPLAINED_MS);
  const lateness = (h: HandOver) => h.ms - (h.stableMs ?? h.ms);
  const slowest = [...chaos.handOvers].sort((a, b) => b.ms - a.ms)[0];
  out.push(
    {
      name: `chaos (3 replicas, one SIGKILLed every ~${KILL_EVERY_MS / 1000} s): pods created twice`,
      value: chaos.duplicates.length,
      unit: 'pods',
      goal: '0',
      met: chaos.duplicates.length === 0 && chaos.stepPods === STEPS * chaos.total,
      note: `${chaos.stepPods} step pods for ${chaos.total} workflows × ${STEPS} steps${chaos.duplicates.length ? `; twice: ${chaos.duplicates.slice(0, 10).join(', ')}` : ''}`,
    },
    {
      name: 'chaos: workflows not Succeeded (stuck)',
      value: chaos.total - chaos.succeeded,
      unit: 'workflows',
      goal: '0',
      met: chaos.succeeded === chaos.total && chaos.chaosError === undefined,
      note: `${chaos.chaosError ? `the chaos stopped early: ${chaos.chaosError}; ` : ''}${chaos.unfinished.length} unfinished${chaos.unfinished.length ? ` (${chaos.unfinished.slice(0, 10).join(', ')})` : ''}; ${chaos.kills.length} replicas killed; ${chaos.total} workflows in ${chaos.seconds.toFixed(1)} s = ${round(chaos.perMinute)} workflows/min`,
    },
    {
      name: 'chaos: workflows whose three steps did not all Succeed once, in order',
      value: chaos.outOfOrder.length,
      unit: 'workflows',
      goal: '0',
      met: chaos.outOfOrder.length === 0,
      ...(chaos.outOfOrder.length ? { note: chaos.outOfOrder.slice(0, 5).join(' | ') } : {}),
    },
    {
      name: 'chaos: hand-over after a SIGKILL (kill → first write by another replica), max',
      value: Number(max.toFixed(1)),
      unit: 's',
      goal: '≤ 30 s',
      met: max <= 30 && chaos.neverTaken.length === 0 && ms.length > 0,
      note: `${ms.length} workflows held by killed replicas (and ${chaos.finishedByKilled} more that the killed one finished itself, its last write still on its way), median ${median.toFixed(1)} s; the earliest the replicas' own views allowed (modelHandOver): max ${modelled.length ? (Math.max(...modelled) / 1000).toFixed(1) : '-'} s, median ${modelled.length ? (percentile(modelled, 50) / 1000).toFixed(1) : '-'} s (of ${modelled.length})${slowest ? `; slowest ${slowest.workflow} ${(slowest.ms / 1000).toFixed(1)} s, its owners on a full view of the ring after the kill ${slowest.owners?.join(' → ')} (the views allowed ${slowest.modelMs === undefined ? '-' : `${(slowest.modelMs / 1000).toFixed(1)} s`})` : ''}${chaos.neverTaken.length ? `; never taken over: ${chaos.neverTaken.slice(0, 10).join(', ')}` : ''}; per kill: ${perKill.join(', ')}`,
    },
    {
      name: `chaos: hand-overs more than ${UNEXPLAINED_MS / 1000} s after the new owner's own view allowed them`,
      value: late.length,
      unit: 'workflows',
      goal: 'reported',
      met: true,
      note: `a running replica may take a workflow over once, in its own view (a member is live while its Lease exists and it saw it change within 15 s, counted from its own start), the killed holder is gone and the ring gives the workflow to it; counted: taken over more than ${UNEXPLAINED_MS / 1000} s after one running replica had been so allowed for ${DETECT_MS / 1000} s on end${
        late.length
          ? `, the latest ${(Math.max(...late.map(lateness)) / 1000).toFixed(1)} s later (${[...late]
              .sort((x, y) => lateness(y) - lateness(x))
              .slice(0, 3)
              .map((h) => `${h.workflow} ${(h.ms / 1000).toFixed(1)} s vs ${((h.stableMs ?? 0) / 1000).toFixed(1)} s`)
              .join(', ')})`
          : ''
      }; on ${cores} cores a replica that gains a dead one's share has hundreds of workflows queued at once, and may be killed before it gets to them`,
    },
    {
      name: 'chaos: hand-over after a SIGKILL, median',
      value: Number(median.toFixed(1)),
      unit: 's',
      goal: 'reported',
      met: ms.length > 0,
      note: `member Leases last 15 s and are listed every 2 s: a dead replica is counted out 15–17 s after its last renewal, and by a replica that started since then and still lists its Lease 15 s after that one's own start (it judges by its own clock); ${KILL_EVERY_MS < LEASE_MS ? `with a kill every ${KILL_EVERY_MS / 1000} s, shorter than a lease, a share often moves to a replica that is itself dead or too new to see the holder gone, and waits again` : `with a kill every ${KILL_EVERY_MS / 1000} s, longer than a lease, what is left after the move is the new owner's work queue: it gained a share of the unfinished workflows at once`}`,
    },
  );
  return out;
}

export async function runReplicasBench(): Promise<Figure[]> {
  const total = arg('workflows', 1000);
  const work = mkdtempSync(join(tmpdir(), 'plugflow-replicas-'));
  const plane = new ControlPlane({ dir: join(work, 'plane'), log: (l) => console.log(l) });
  await plane.start();
  const kc = new KubeConfig();
  kc.loadFromFile(plane.kubeconfigPath);
  const client = await KubeClient.fromKubeConfig(kc, { connections: 64 });
  try {
    await applyCrds(plane.kubeconfigPath);
    const bench: Bench = { plane, client, pids: planePids(plane) };
    const runs: RunResult[] = [];
    for (const n of [1, 2, 3]) if (RUNS.includes(`r${n}`)) runs.push(await run(bench, `r${n}`, n, total, false));
    const chaos = RUNS.includes('chaos') ? await run(bench, 'chaos', 3, total, true) : undefined;
    const figures = figuresOf(runs, chaos);
    if (!figures.filter((f) => f.name.startsWith('chaos')).every((f) => f.met)) process.exitCode = 1;
    return figures;
  } finally {
    await client.close();
    await plane.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  printFigures('controller replicas (--sharding)', await runReplicasBench());
  process.exit();
}
