/**
 * Chaos during the soak: at seeded moments, one of
 *
 * - `controller-kill`  SIGKILL the controller, start a new one after a short pause (it must
 *                      resume from the API state: pods, TaskSets, statuses);
 * - `server-kill`      a burst of 30 events, and SIGKILL of the server as soon as the first
 *                      of them are accepted: every accepted event must still end as its
 *                      workflow; then a new server;
 * - `server-term`      SIGTERM the server: a graceful stop must dispatch every accepted event;
 * - `apiserver-restart` stop kube-apiserver and start it again (same port and data);
 * - `agent-delete`     delete a running agent pod (its plugin tasks end in Error; retried);
 * - `sidecar-kill`     SIGKILL the process group of one plugin sidecar of a running agent pod,
 *                      found through the runner's containerID (`plugflow-runner://<pid>`);
 * - `bus-node-kill`    (with an event bus) SIGKILL one JetStream node during a burst of events,
 *                      start it again after a pause.
 *
 * The schedule is fixed by the seed before the run starts, so a run can be replayed; the
 * targets picked at the moment (which agent pod, which sidecar) come from the same seed.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { LABEL_COMPONENT } from '../../src/api/index.js';
import { AGENT_COMPONENT, AGENT_CONTAINER } from '../../src/plugins/index.js';
import { PODS } from '../../src/kube/resource.js';
import { sleep } from './component.js';
import type { EventSender } from './lanes.js';
import type { Ledger } from './ledger.js';
import { scrapeMetric, type Monitor } from './monitor.js';
import type { Prng } from './prng.js';
import type { System } from './system.js';

export const CHAOS_KINDS = ['controller-kill', 'server-kill', 'server-term', 'apiserver-restart', 'agent-delete', 'sidecar-kill'] as const;
/** With an event bus, one of its nodes is killed too. */
export const BUS_CHAOS_KINDS = [...CHAOS_KINDS, 'bus-node-kill'] as const;
export type ChaosKind = (typeof BUS_CHAOS_KINDS)[number];

export interface PlannedChaos {
  kind: ChaosKind;
  /** ms after the start of the workload. */
  at: number;
}

/**
 * Every kind at least once (in a seeded order), then more in seeded order, spread over 10–85 %
 * of the run with at least `minGapMs` between two actions.
 */
export function planChaos(
  rng: Prng,
  durationMs: number,
  count: number,
  minGapMs = 8000,
  from: readonly ChaosKind[] = CHAOS_KINDS,
): PlannedChaos[] {
  const kinds: ChaosKind[] = [];
  while (kinds.length < count) {
    const round = [...from];
    for (let i = round.length - 1; i > 0; i--) {
      const j = rng.int(0, i);
      [round[i], round[j]] = [round[j]!, round[i]!];
    }
    kinds.push(...round);
  }
  kinds.length = count;
  const start = durationMs * 0.1;
  const span = durationMs * 0.75;
  const slot = span / count;
  return kinds.map((kind, i) => ({ kind, at: Math.round(start + i * slot + rng.next() * Math.max(0, slot - minGapMs)) }));
}

export interface ChaosContext {
  system: System;
  ledger: Ledger;
  rng: Prng;
  pluginNamespaces: string[];
  /** Its server counters are read just before a server is stopped. */
  monitor: Monitor;
  /** A server kill comes right after a burst of events starts being accepted (see below). */
  events: EventSender;
  aborted: () => boolean;
}

export async function runChaos(ctx: ChaosContext, plan: PlannedChaos[], t0: number): Promise<void> {
  for (const p of plan) {
    const wait = t0 + p.at - Date.now();
    if (wait > 0) await sleep(wait);
    if (ctx.aborted()) return;
    const at = ctx.ledger.now();
    try {
      const r = await act(ctx, p.kind);
      ctx.ledger.chaos.push({ kind: p.kind, at, ...r });
    } catch (err) {
      ctx.ledger.chaos.push({ kind: p.kind, at, detail: `FAILED: ${(err as Error)?.message ?? String(err)}` });
    }
  }
}

async function act(ctx: ChaosContext, kind: ChaosKind): Promise<{ detail: string; downMs?: number; skipped?: boolean; signalAt?: number }> {
  const { system, rng } = ctx;
  switch (kind) {
    case 'controller-kill': {
      const pid = system.controller.pid;
      await system.controller.stop('SIGKILL');
      const pause = rng.int(200, 3000);
      await sleep(pause);
      const t = Date.now();
      await system.controller.start();
      return {
        detail: `pid ${pid} killed; new controller pid ${system.controller.pid} ready ${Date.now() - t} ms after start`,
        downMs: pause + Date.now() - t,
      };
    }
    case 'server-kill':
    case 'server-term': {
      const pid = system.server.pid;
      // Events in flight make the kill meaningful: a burst, and the signal once 5 are accepted.
      let signal!: () => void;
      const fiveAccepted = new Promise<void>((r) => (signal = r));
      const burst = ctx.events.burst(30, (n) => n >= 5 && signal());
      await Promise.race([fiveAccepted, burst, sleep(5000)]);
      const depth = await scrapeMetric(system.serverMetricsUrl, 'plugflow_event_queue_depth');
      await ctx.monitor.scrapeServer();
      const t = Date.now();
      const signalAt = ctx.ledger.now();
      await system.server.stop(kind === 'server-kill' ? 'SIGKILL' : 'SIGTERM');
      await burst;
      const stopMs = Date.now() - t;
      await sleep(rng.int(200, 2000));
      await system.server.start();
      return {
        detail: `pid ${pid} ${kind === 'server-kill' ? 'SIGKILLed' : `stopped with SIGTERM in ${stopMs} ms`}; event queue depth just before: ${depth ?? 'unknown'}; new server pid ${system.server.pid}`,
        downMs: Date.now() - t,
        signalAt,
      };
    }
    case 'bus-node-kill': {
      const nats = system.nats;
      if (!nats) return { detail: 'no event bus in this run', skipped: true };
      const node = rng.int(0, nats.servers.length - 1);
      const burst = ctx.events.burst(20);
      await sleep(rng.int(50, 500));
      const t = Date.now();
      await nats.kill(node);
      await burst;
      await sleep(rng.int(500, 3000));
      await nats.restart(node);
      return { detail: `JetStream node ${node} SIGKILLed during a burst of 20 events, started again`, downMs: Date.now() - t };
    }
    case 'apiserver-restart': {
      const down = rng.int(0, 3000);
      const t = Date.now();
      await system.plane.restartApiServer(down);
      return { detail: `kube-apiserver stopped, ${down} ms pause, started again`, downMs: Date.now() - t };
    }
    case 'agent-delete': {
      const pod = await runningAgentPod(ctx);
      if (!pod) return { detail: 'no running agent pod within 90 s', skipped: true };
      await system.client.delete(PODS, pod.metadata!.namespace!, pod.metadata!.name!);
      return { detail: `deleted agent pod ${pod.metadata!.namespace}/${pod.metadata!.name}` };
    }
    case 'sidecar-kill': {
      const pod = await runningAgentPod(ctx, (p) => sidecars(p).length > 0);
      if (!pod) return { detail: 'no running agent pod with a running sidecar within 90 s', skipped: true };
      const target = rng.pick(sidecars(pod));
      process.kill(-target.pid, 'SIGKILL');
      return {
        detail: `killed sidecar ${target.name} (process group ${target.pid}) of agent pod ${pod.metadata!.namespace}/${pod.metadata!.name}`,
      };
    }
  }
}

function sidecars(pod: V1Pod): { name: string; pid: number }[] {
  return (pod.status?.containerStatuses ?? [])
    .filter((c) => c.name !== AGENT_CONTAINER && c.state?.running && c.containerID?.startsWith('plugflow-runner://'))
    .map((c) => ({ name: c.name, pid: Number(c.containerID!.slice('plugflow-runner://'.length)) }))
    .filter((c) => Number.isInteger(c.pid) && c.pid > 1);
}

/** A running agent pod of a plugin lane, waiting up to 90 s for one (they start slowly here). */
async function runningAgentPod(ctx: ChaosContext, also: (p: V1Pod) => boolean = () => true): Promise<V1Pod | undefined> {
  const until = Date.now() + 90_000;
  while (Date.now() < until && !ctx.aborted()) {
    const found: V1Pod[] = [];
    for (const namespace of ctx.pluginNamespaces) {
      try {
        const pods = await ctx.system.client.list<V1Pod>(PODS, { namespace, labelSelector: `${LABEL_COMPONENT}=${AGENT_COMPONENT}` });
        found.push(...pods.items.filter((p) => p.status?.phase === 'Running' && !p.metadata?.deletionTimestamp && also(p)));
      } catch {
        // API server restarting
      }
    }
    if (found.length > 0) return ctx.rng.pick(found);
    await sleep(500);
  }
  return undefined;
}
