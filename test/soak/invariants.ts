/**
 * The soak's invariants, checked at the end against the ledger and the cluster's final state:
 *
 * 1. every accepted event (answered 200) produced exactly one workflow, whatever was killed
 *    meanwhile; events that were refused or matched nothing produced none; an event whose
 *    answer leaves it open (none, 202, or a bus's 503) produced at most one; no event two;
 * 2. every workflow reached a final phase matching its design (and its design's outputs);
 *    every workflow in the soak namespaces is one the driver asked for;
 * 3. no orphaned pods (every pod belongs to an existing workflow and none runs for a finished
 *    one), no agent pods left, no TaskSet entries left (spec.tasks and status.nodes) for
 *    finished workflows, no TaskSet without its workflow;
 * 4. neither the controller nor the server crashed (exits nobody asked for), and their memory
 *    did not grow without bound (see memoryGrowth).
 */
import type { V1Pod } from '@kubernetes/client-node';
import { LABEL_COMPONENT, LABEL_WORKFLOW, type Workflow, type WorkflowTaskSet } from '../../src/api/index.js';
import { AGENT_COMPONENT } from '../../src/plugins/index.js';
import { DESIGNS, EVENT_LABEL, SOAK_LABEL, type DesignName } from './designs.js';
import type { Ledger } from './ledger.js';
import type { RssSample } from './monitor.js';

export interface FinalState {
  workflows: Workflow[];
  pods: V1Pod[];
  taskSets: WorkflowTaskSet[];
}

export interface EventTally {
  sent: number;
  accepted: number;
  rejected: number;
  unanswered: number;
  /** Accepted, matching events that produced their one workflow. */
  delivered: number;
  /** Matching events whose answer left the outcome open (no answer, 202, a bus's 503): zero or one workflow each. */
  open: number;
  /** Accepted (200), matching events without their workflow: each is also a violation. */
  lost: number;
  /** Answers by kind of event: `match: 200×40 0×3; invalid: 400×5`. */
  breakdown: string;
}

export interface InvariantResult {
  violations: string[];
  /** Deviations that break no invariant but differ from the documented behaviour. */
  findings: string[];
  events: EventTally;
  workflowsByDesign: Record<string, { total: number; asDesigned: number }>;
  memory: { component: string; firstKiB: number; peakKiB: number; lastKiB: number; growth: number; bounded: boolean }[];
}

const FINAL = new Set(['Succeeded', 'Failed', 'Error']);

export function checkInvariants(ledger: Ledger, state: FinalState, crashes: string[], rss: RssSample[]): InvariantResult {
  const violations: string[] = [...crashes];
  const findings: string[] = [];
  const byKey = new Map(state.workflows.map((w) => [`${w.metadata.namespace}/${w.metadata.name}`, w]));

  // 1. events
  const byEvent = new Map<string, Workflow[]>();
  for (const w of state.workflows) {
    const id = w.metadata.labels?.[EVENT_LABEL];
    if (id !== undefined) byEvent.set(id, [...(byEvent.get(id) ?? []), w]);
  }
  const answers = new Map<string, Map<number, number>>();
  for (const e of ledger.events) {
    const m = answers.get(e.kind) ?? new Map<number, number>();
    m.set(e.status, (m.get(e.status) ?? 0) + 1);
    answers.set(e.kind, m);
  }
  const breakdown = [...answers].map(([k, m]) => `${k}: ${[...m].map(([st, n]) => `${st || 'no answer'}×${n}`).join(' ')}`).join('; ');
  const tally: EventTally = {
    sent: ledger.events.length,
    accepted: 0,
    rejected: 0,
    unanswered: 0,
    delivered: 0,
    open: 0,
    lost: 0,
    breakdown,
  };
  const sentIds = new Set<string>();
  for (const e of ledger.events) {
    sentIds.add(e.id);
    const made = byEvent.get(e.id) ?? [];
    if (e.status === 200) tally.accepted++;
    else if (e.status === 0) tally.unanswered++;
    else tally.rejected++;
    if (made.length > 1)
      violations.push(
        `event ${e.id} (${e.kind}, answered ${e.status}) produced ${made.length} workflows: ${made.map((w) => w.metadata.name).join(', ')}`,
      );
    const open = e.status === 0 || e.status === 202 || (ledger.eventBus && e.status === 503);
    if (e.kind !== 'match' || (e.status !== 200 && !open)) {
      if (made.length > 0)
        violations.push(
          `event ${e.id} (${e.kind}, answered ${e.status}) should produce no workflow but produced ${made.map((w) => w.metadata.name).join(', ')}`,
        );
      continue;
    }
    if (open) {
      tally.open++; // zero or one workflow
      continue;
    }
    if (made.length === 1) tally.delivered++;
    else if (made.length === 0) {
      tally.lost++;
      violations.push(`event ${e.id} was accepted (200 at ${(e.sentAt / 1000).toFixed(1)}s) but produced no workflow`);
    }
  }
  for (const id of byEvent.keys())
    if (!sentIds.has(id))
      violations.push(
        `workflow(s) ${byEvent
          .get(id)!
          .map((w) => w.metadata.name)
          .join(', ')} carry event id ${id}, which was never sent`,
      );

  // 2. workflows
  const workflowsByDesign: InvariantResult['workflowsByDesign'] = {};
  const count = (design: string, ok: boolean) => {
    const d = (workflowsByDesign[design] ??= { total: 0, asDesigned: 0 });
    d.total++;
    if (ok) d.asDesigned++;
  };
  const chaosNear = (w: Workflow) => {
    const start = Date.parse(w.metadata.creationTimestamp ?? '') - ledger.started;
    const end = Date.parse(w.status?.finishedAt ?? '') - ledger.started;
    const near = ledger.chaos.filter((c) => !c.skipped && c.at >= start - 1000 && (Number.isNaN(end) || c.at <= end + 1000));
    return near.length ? `; chaos while it ran: ${near.map((c) => `${c.kind}@${(c.at / 1000).toFixed(1)}s`).join(', ')}` : '';
  };
  const judge = (w: Workflow, design: DesignName): boolean => {
    const d = DESIGNS[design];
    const phase = w.status?.phase;
    const where = `workflow ${w.metadata.namespace}/${w.metadata.name} (${design})`;
    if (!phase || !FINAL.has(phase)) {
      violations.push(`${where} did not finish: phase ${phase ?? '(none)'}${chaosNear(w)}`);
      return false;
    }
    if (phase !== d.expected) {
      violations.push(`${where} ended ${phase}, expected ${d.expected}: ${w.status?.message ?? ''} ${failedNodes(w)}${chaosNear(w)}`);
      return false;
    }
    const wrong = d.check?.(w);
    if (wrong) {
      violations.push(`${where} ended ${phase} as designed but ${wrong}${chaosNear(w)}`);
      return false;
    }
    return true;
  };
  for (const s of ledger.submissions.values()) {
    const w = byKey.get(`${s.namespace}/${s.name}`);
    if (!w) {
      if (s.accepted) violations.push(`workflow ${s.namespace}/${s.name} (${s.design}) was accepted by the server but does not exist`);
      continue;
    }
    count(s.design, judge(w, s.design));
  }
  for (const w of state.workflows) {
    const design = w.metadata.labels?.[SOAK_LABEL] as DesignName | undefined;
    if (w.metadata.labels?.[EVENT_LABEL] !== undefined) {
      count('event', judge(w, 'event'));
      continue;
    }
    if (!design || !ledger.submissions.has(`${w.metadata.namespace}/${w.metadata.name}`)) {
      violations.push(`workflow ${w.metadata.namespace}/${w.metadata.name} exists but the soak never submitted it`);
    }
  }

  // 3. leftovers
  for (const p of state.pods) {
    const wfName = p.metadata?.labels?.[LABEL_WORKFLOW];
    const where = `pod ${p.metadata?.namespace}/${p.metadata?.name}`;
    const w = wfName ? byKey.get(`${p.metadata?.namespace}/${wfName}`) : undefined;
    if (!w) {
      violations.push(`${where} is orphaned: its workflow ${wfName ?? '(no label)'} does not exist`);
      continue;
    }
    const done = FINAL.has(w.status?.phase ?? '');
    if (p.metadata?.labels?.[LABEL_COMPONENT] === AGENT_COMPONENT)
      violations.push(`agent ${where} still exists (phase ${p.status?.phase}); its workflow is ${w.status?.phase ?? 'not started'}`);
    else if (done && (p.status?.phase === 'Running' || p.status?.phase === 'Pending'))
      violations.push(`${where} is ${p.status?.phase} but its workflow ended ${w.status?.phase}`);
  }
  let staleResults = 0;
  let staleTaskSets = 0;
  for (const ts of state.taskSets) {
    const where = `TaskSet ${ts.metadata.namespace}/${ts.metadata.name}`;
    const w = byKey.get(`${ts.metadata.namespace}/${ts.metadata.name}`);
    if (!w) {
      violations.push(`${where} is orphaned: its workflow does not exist`);
      continue;
    }
    if (!FINAL.has(w.status?.phase ?? '')) continue;
    const tasks = Object.keys(ts.spec?.tasks ?? {});
    const nodes = Object.keys(ts.status?.nodes ?? {});
    if (tasks.length) violations.push(`${where}: ${tasks.length} spec.tasks entries left after the workflow ended (${tasks.join(', ')})`);
    // A result entry whose node the workflow holds as finished is a stale copy, not a lost task.
    const unfinished = nodes.filter((id) => !FINAL.has(w.status?.nodes?.[id]?.phase ?? ''));
    if (unfinished.length) violations.push(`${where}: status.nodes entries ${unfinished.join(', ')} have no finished node in the workflow`);
    if (nodes.length) staleResults += nodes.length;
    if (nodes.length) staleTaskSets++;
  }
  if (staleResults) {
    violations.push(
      `${staleResults} TaskSet status.nodes entries of ${staleTaskSets} finished workflows were never removed (COMPAT.md and the engine contract: removeTask drops spec and status entries)`,
    );
  }

  // 4. memory
  const memory = (['controller', 'server'] as const).map((c) => memoryGrowth(c, rss));
  for (const m of memory) {
    if (!m.bounded)
      violations.push(
        `${m.component} memory grew from ${mib(m.firstKiB)} to ${mib(m.lastKiB)} (×${m.growth.toFixed(2)}) within one incarnation`,
      );
  }
  return { violations, findings, events: tally, workflowsByDesign, memory };
}

function failedNodes(w: Workflow): string {
  const bad = Object.values(w.status?.nodes ?? {}).filter((n) => n.phase === 'Failed' || n.phase === 'Error');
  return bad.length ? `[${bad.map((n) => `${n.displayName}: ${n.phase} ${n.message ?? ''}`.trim()).join('; ')}]` : '';
}

const mib = (kib: number) => `${(kib / 1024).toFixed(0)} MiB`;

/**
 * Memory of the longest-lived incarnation: the median of its last quarter of samples against
 * the median of its second quarter (after warm-up). "Unbounded" is more than ×1.5 AND more than
 * 64 MiB of growth — a steady workload must level off, and a short run's noise is smaller.
 */
export function memoryGrowth(component: 'controller' | 'server', rss: RssSample[]) {
  const inc = component === 'controller' ? 'controllerIncarnation' : 'serverIncarnation';
  const groups = new Map<number, number[]>();
  for (const s of rss) {
    const v = s[component];
    if (v !== undefined) groups.set(s[inc], [...(groups.get(s[inc]) ?? []), v]);
  }
  const longest = [...groups.values()].sort((a, b) => b.length - a.length)[0] ?? [];
  const all = rss.map((s) => s[component]).filter((v): v is number => v !== undefined);
  const peakKiB = all.length ? Math.max(...all) : 0;
  // Too few samples of one incarnation to tell a trend: no verdict (growth NaN), not a violation.
  if (longest.length < 8)
    return { component, firstKiB: longest[0] ?? 0, peakKiB, lastKiB: longest[longest.length - 1] ?? 0, growth: Number.NaN, bounded: true };
  const q = Math.floor(longest.length / 4);
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const early = median(longest.slice(q, 2 * q));
  const late = median(longest.slice(longest.length - q));
  const growth = late / early;
  return { component, firstKiB: early, peakKiB, lastKiB: late, growth, bounded: growth <= 1.5 || late - early <= 64 * 1024 };
}
