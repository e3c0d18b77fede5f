/**
 * The soak's steady mix, as three kinds of lanes that run side by side until the deadline:
 *
 * - REST lane: workflows of the pod designs (container, failing container, script, DAG, loop)
 *   through the server's REST API, at a steady pace with seeded jitter;
 * - plugin lanes: one plugin workflow at a time per lane namespace (see plugin-configmaps.ts for
 *   why one at a time), each the next as soon as the previous one ended and its agent pod left;
 * - event lane: events to the event endpoint — most match the binding, some match nothing, some
 *   are not JSON — with an occasional burst.
 *
 * A submission that fails (server killed, API server down) is tried again under the same name,
 * so it is created at most once; 409 on a retry means an earlier try got through.
 */
import { LABEL_COMPONENT, type Workflow } from '../../src/api/index.js';
import { AGENT_COMPONENT } from '../../src/plugins/index.js';
import type { KubeClient } from '../../src/kube/client.js';
import { PODS, WORKFLOWS } from '../../src/kube/resource.js';
import { sleep } from './component.js';
import { buildWorkflow, DESIGNS, type DesignName } from './designs.js';
import { sendEvent, submitWorkflow } from './http.js';
import type { EventKind, Ledger, Submission } from './ledger.js';
import type { Prng } from './prng.js';

export interface LaneContext {
  ledger: Ledger;
  serverUrl: string;
  token: string;
  client: KubeClient;
  deadline: number;
  /** Set when the run is aborted (a failure elsewhere): lanes stop at once. */
  aborted: () => boolean;
}

const FINAL = new Set(['Succeeded', 'Failed', 'Error']);

/** One try of a submission; true when the workflow now exists. */
export async function trySubmit(ctx: LaneContext, s: Submission, workflow: Workflow): Promise<boolean> {
  s.tries++;
  const a = await submitWorkflow(ctx.serverUrl, ctx.token, s.namespace, workflow);
  if (a.status === 200 || (a.status === 409 && s.tries > 1)) {
    s.accepted = true;
    return true;
  }
  s.errors.push(a.status ? `${a.status}: ${a.text.slice(0, 200)}` : `no answer: ${a.error}`);
  return false;
}

function newSubmission(
  ctx: LaneContext,
  namespace: string,
  design: Exclude<DesignName, 'event'>,
  n: number,
): { s: Submission; wf: Workflow } {
  const name = `soak-${design}-${n}`;
  const s: Submission = { name, namespace, design, expected: DESIGNS[design].expected, tries: 0, accepted: false, errors: [] };
  ctx.ledger.submissions.set(`${namespace}/${name}`, s);
  return { s, wf: buildWorkflow(design, name) };
}

export async function restLane(ctx: LaneContext, rng: Prng, namespace: string, everyMs: number): Promise<void> {
  const designs = [
    [4, 'container'],
    [1, 'container-fail'],
    [2, 'script'],
    [1, 'dag'],
    [1, 'loop'],
  ] as const;
  const retries: { s: Submission; wf: Workflow }[] = [];
  let n = 0;
  while (Date.now() < ctx.deadline && !ctx.aborted()) {
    const next = retries.shift() ?? newSubmission(ctx, namespace, rng.weighted(designs), n++);
    if (!(await trySubmit(ctx, next.s, next.wf)) && next.s.tries < 8) retries.push(next);
    await sleep(everyMs * (0.5 + rng.next()));
  }
  // The system is whole again by now: finish what a kill interrupted.
  for (const r of retries) {
    for (let i = 0; i < 5 && !r.s.accepted && !ctx.aborted(); i++) {
      if (!(await trySubmit(ctx, r.s, r.wf))) await sleep(2000);
    }
  }
}

async function waitFinal(ctx: LaneContext, namespace: string, name: string, timeoutMs: number): Promise<string | undefined> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until && !ctx.aborted()) {
    try {
      const wf = await ctx.client.get<Workflow>(WORKFLOWS, namespace, name);
      if (wf.status?.phase && FINAL.has(wf.status.phase)) return wf.status.phase;
    } catch {
      // API server restarting: ask again
    }
    await sleep(1000);
  }
  return undefined;
}

async function waitNoAgentPod(ctx: LaneContext, namespace: string, timeoutMs: number): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until && !ctx.aborted()) {
    try {
      const pods = await ctx.client.list(PODS, { namespace, labelSelector: `${LABEL_COMPONENT}=${AGENT_COMPONENT}` });
      if (pods.items.length === 0) return true;
    } catch {
      // API server restarting
    }
    await sleep(500);
  }
  return false;
}

export async function pluginLane(ctx: LaneContext, rng: Prng, namespace: string): Promise<void> {
  let n = 0;
  while (Date.now() < ctx.deadline && !ctx.aborted()) {
    const { s, wf } = newSubmission(
      ctx,
      namespace,
      rng.weighted([
        [4, 'plugins'],
        [1, 'plugin-fail'],
      ] as const),
      n++,
    );
    while (!s.accepted && s.tries < 10 && !ctx.aborted()) {
      if (!(await trySubmit(ctx, s, wf))) await sleep(1500);
    }
    if (!s.accepted) continue;
    const phase = await waitFinal(ctx, namespace, s.name, 240_000);
    if (!phase) {
      ctx.ledger.note(`plugin lane ${namespace}: ${s.name} not final after 240 s; lane stops`);
      return;
    }
    if (!(await waitNoAgentPod(ctx, namespace, 90_000))) {
      ctx.ledger.note(`plugin lane ${namespace}: the agent pod of ${s.name} still exists 90 s after the workflow ended; lane stops`);
      return;
    }
  }
}

/** Sends events and records each in the ledger; shared by the event lane and the chaos burst. */
export class EventSender {
  private n = 0;

  constructor(
    private readonly ctx: LaneContext,
    private readonly namespace: string,
  ) {}

  async send(kind: EventKind): Promise<number> {
    const id = `e-${this.n++}`;
    const sentAt = this.ctx.ledger.now();
    const body = kind === 'invalid' ? `{"soak": true, "id": "${id}"` : JSON.stringify({ soak: kind === 'match', id });
    const a = await sendEvent(this.ctx.serverUrl, this.ctx.token, this.namespace, 'soak', body);
    this.ctx.ledger.events.push({ id, kind, sentAt, status: a.status, ...(a.error ? { error: a.error } : {}) });
    return a.status;
  }

  /** `count` matching events at once; `onAccepted` sees the running count of 200 answers. */
  burst(count: number, onAccepted: (accepted: number) => void = () => {}): Promise<void> {
    let accepted = 0;
    return Promise.all(
      Array.from({ length: count }, async () => {
        if ((await this.send('match')) === 200) onAccepted(++accepted);
      }),
    ).then(() => {});
  }
}

export async function eventLane(ctx: LaneContext, rng: Prng, sender: EventSender, everyMs: number): Promise<void> {
  while (Date.now() < ctx.deadline && !ctx.aborted()) {
    if (rng.chance(0.05)) await sender.burst(10);
    else
      await sender.send(
        rng.weighted([
          [8, 'match'],
          [1, 'nomatch'],
          [1, 'invalid'],
        ] as const),
      );
    await sleep(everyMs * (0.5 + rng.next()));
  }
}
