/**
 * One soak run: start the system, run the steady mix (and chaos, when asked) for the given
 * time, let everything settle, then check the invariants. Reproducible from its seed: the
 * workload's choices and the chaos schedule come from it (the machine's timing does not).
 */
import type { V1Pod } from '@kubernetes/client-node';
import { join } from 'node:path';
import type { Workflow, WorkflowTaskSet } from '../../src/api/index.js';
import { CONFIGMAPS, PODS, WORKFLOW_TASK_SETS, WORKFLOW_TEMPLATES, WORKFLOWS } from '../../src/kube/resource.js';
import { BUS_CHAOS_KINDS, CHAOS_KINDS, runChaos, planChaos, type PlannedChaos } from './chaos.js';
import { sleep } from './component.js';
import { eventObjects } from './designs.js';
import { closeHttp } from './http.js';
import { checkInvariants, type FinalState, type InvariantResult } from './invariants.js';
import { EventSender, eventLane, pluginLane, restLane, type LaneContext } from './lanes.js';
import { Ledger, type ChaosRecord } from './ledger.js';
import { Monitor, scrapeMetric, type RssSample, type ServerCounters } from './monitor.js';
import { soakPluginConfigMaps } from './plugin-configmaps.js';
import { Prng } from './prng.js';
import { startSystem, type System } from './system.js';

export interface SoakOptions {
  seed: number;
  durationMs: number;
  chaos: boolean;
  /** Working directory (control plane, runner, component logs). */
  dir: string;
  /** Mean pause between two REST submissions (default 3 s). */
  restEveryMs?: number;
  /** Mean pause between two events (default 1.5 s). */
  eventEveryMs?: number;
  /** Plugin lanes (default 1: the local runner runs one agent pod at a time, see plugin-configmaps.ts). */
  pluginLanes?: number;
  /** Chaos actions (default: one per 50 s, at least one of each kind). */
  chaosActions?: number;
  /** Longest wait for everything to finish after the workload stops (default 240 s). */
  settleMs?: number;
  sampleEveryMs?: number;
  /** Run the server with a three-node JetStream event bus (chaos then kills a bus node too). */
  eventBus?: boolean;
  say?: (line: string) => void;
}

export interface SoakReport {
  seed: number;
  chaos: boolean;
  durationMs: number;
  wallMs: number;
  settleMs: number;
  settled: boolean;
  plan: PlannedChaos[];
  chaosDone: ChaosRecord[];
  notes: string[];
  submissions: { total: number; accepted: number; retried: number };
  result: InvariantResult;
  counters: ServerCounters;
  rss: RssSample[];
  restarts: { controller: number; server: number; apiServer: number; agentPods: number; sidecars: number; controllerLostLease: number };
  logDir: string;
}

const SOAK_NS = 'soak';

export async function runSoak(o: SoakOptions): Promise<SoakReport> {
  const say = o.say ?? (() => {});
  const rng = new Prng(o.seed);
  const lanes = Array.from({ length: o.pluginLanes ?? 1 }, (_, i) => `soak-p${i}`);
  const namespaces = [SOAK_NS, ...lanes];
  const t0 = Date.now();
  const system = await startSystem({
    dir: o.dir,
    namespaces,
    say,
    eventBus: o.eventBus === true,
    prepare: async (client) => {
      for (const [i, ns] of lanes.entries())
        for (const cm of soakPluginConfigMaps(ns, 17_100 + 10 * i)) await client.create(CONFIGMAPS, ns, cm);
      const { template, binding } = eventObjects(SOAK_NS);
      await client.create(WORKFLOW_TEMPLATES, SOAK_NS, template);
      await client.create(
        { group: 'plugflow.io', version: 'v1alpha1', plural: 'workfloweventbindings', kind: 'WorkflowEventBinding', namespaced: true },
        SOAK_NS,
        binding,
      );
    },
  });
  const ledger = new Ledger();
  ledger.eventBus = o.eventBus === true;
  const monitor = new Monitor(system, ledger.started, o.sampleEveryMs ?? 5000);
  let failure: unknown;
  try {
    monitor.start();
    let aborted = false;
    const ctx: LaneContext = {
      ledger,
      serverUrl: system.serverUrl,
      token: system.adminToken,
      client: system.client,
      deadline: Date.now() + o.durationMs,
      aborted: () => aborted,
    };
    const plan = o.chaos
      ? planChaos(
          rng.fork('chaos-plan'),
          o.durationMs,
          o.chaosActions ?? Math.max(o.eventBus ? 7 : 6, Math.round(o.durationMs / 50_000)),
          8000,
          o.eventBus ? BUS_CHAOS_KINDS : CHAOS_KINDS,
        )
      : [];
    say(
      `workload for ${o.durationMs / 1000}s, seed ${o.seed}${o.chaos ? `, chaos: ${plan.map((p) => `${p.kind}@${(p.at / 1000).toFixed(0)}s`).join(', ')}` : ', no chaos'}`,
    );
    const sender = new EventSender(ctx, SOAK_NS);
    const guard = (p: Promise<void>) => p.catch((err) => ((aborted = true), (failure ??= err)));
    await Promise.all([
      guard(restLane(ctx, rng.fork('rest'), SOAK_NS, o.restEveryMs ?? 3000)),
      guard(eventLane(ctx, rng.fork('events'), sender, o.eventEveryMs ?? 1500)),
      ...lanes.map((ns) => guard(pluginLane(ctx, rng.fork(ns), ns))),
      guard(
        runChaos(
          { system, ledger, rng: rng.fork('chaos'), pluginNamespaces: lanes, monitor, events: sender, aborted: () => aborted },
          plan,
          ledger.started,
        ),
      ),
    ]);
    if (failure) throw failure;
    say(`workload done at ${(ledger.now() / 1000).toFixed(0)}s; settling`);
    const settleStart = Date.now();
    const settled = await settle(system, namespaces, o.settleMs ?? 240_000);
    const settleMs = Date.now() - settleStart;
    await monitor.stop();
    const state = await finalState(system, namespaces);
    const crashes = [system.controller, system.server].flatMap((c) =>
      c
        .unexpectedExits()
        .map(
          (e) =>
            `${c.spec.name} incarnation ${e.incarnation} crashed (exit ${e.code ?? e.signal}): ${e.reason || '(no error in its log)'}; see ${c.logPath(e.incarnation)}`,
        ),
    );
    const result = checkInvariants(ledger, state, crashes, monitor.rss);
    if (!settled)
      result.violations.unshift(`the system did not settle within ${(o.settleMs ?? 240_000) / 1000}s after the workload stopped`);
    const subs = [...ledger.submissions.values()];
    const done = (k: string) => ledger.chaos.filter((c) => c.kind === k && !c.skipped && !c.detail.startsWith('FAILED')).length;
    return {
      seed: o.seed,
      chaos: o.chaos,
      durationMs: o.durationMs,
      wallMs: Date.now() - t0,
      settleMs,
      settled,
      plan,
      chaosDone: ledger.chaos,
      notes: ledger.notes,
      submissions: { total: subs.length, accepted: subs.filter((s) => s.accepted).length, retried: subs.filter((s) => s.tries > 1).length },
      result,
      counters: monitor.totals(),
      rss: monitor.rss,
      restarts: {
        controller: done('controller-kill'),
        server: done('server-kill') + done('server-term'),
        apiServer: done('apiserver-restart'),
        agentPods: done('agent-delete'),
        sidecars: done('sidecar-kill'),
        controllerLostLease: system.controller.designedExits().length,
      },
      logDir: join(o.dir, 'logs'),
    };
  } finally {
    await monitor.stop().catch(() => {});
    await closeHttp();
    await system.stop();
  }
}

/** Waits until every workflow is final, no pod runs, no agent pod exists and the server's queue is empty. */
async function settle(system: System, namespaces: string[], timeoutMs: number): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  let lastCount = -1;
  let stable = 0;
  while (Date.now() < until) {
    try {
      const s = await finalState(system, namespaces);
      const busy =
        s.workflows.some((w) => !['Succeeded', 'Failed', 'Error'].includes(w.status?.phase ?? '')) ||
        s.pods.some(
          (p) =>
            p.status?.phase === 'Running' ||
            p.status?.phase === 'Pending' ||
            p.metadata?.labels?.['workflows.plugflow.io/component'] === 'agent',
        );
      const depth = await scrapeMetric(system.serverMetricsUrl, 'plugflow_event_queue_depth');
      stable = !busy && depth === 0 && s.workflows.length === lastCount ? stable + 1 : 0;
      lastCount = s.workflows.length;
      if (stable >= 2) return true;
    } catch {
      stable = 0;
    }
    await sleep(2000);
  }
  return false;
}

async function finalState(system: System, namespaces: string[]): Promise<FinalState> {
  const state: FinalState = { workflows: [], pods: [], taskSets: [] };
  for (const namespace of namespaces) {
    state.workflows.push(...(await system.client.list<Workflow>(WORKFLOWS, { namespace })).items);
    state.pods.push(...(await system.client.list<V1Pod>(PODS, { namespace })).items);
    state.taskSets.push(...(await system.client.list<WorkflowTaskSet>(WORKFLOW_TASK_SETS, { namespace })).items);
  }
  return state;
}
