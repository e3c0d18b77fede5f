/**
 * CronWorkflow schedule → workflow created latency (issue 13): a CronWorkflow on an every-second
 * schedule, 100 runs; for each, the time from its scheduled time (the run's annotation) to this
 * process seeing the Workflow ADDED on a watch (same machine clock). Own control plane, the local
 * pod runner as the kubelet (the runs are one trivial step; the history limits delete them).
 *
 * Catch-up and backfill (issue 47): a backfill of 100 hourly times, 10 at a time, from the request
 * to Complete on the same stack; and, in process, the decision of a catch-up (policy All, 100
 * runs) after a year-long outage of an `@every 1s` schedule, and the plan of a 1,000-run backfill.
 *
 *   npx tsx bench/cron-bench.ts     (also part of `make bench`)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ANNOTATION_SCHEDULED_TIME, LABEL_CRON_WORKFLOW, type CronWorkflow } from '../src/api/index.js';
import { CRON_WORKFLOWS, WORKFLOWS } from '../src/kube/resource.js';
import { planBackfill } from '../src/cron/backfill.js';
import { decideCron, schedulesOf } from '../src/cron/decide.js';
import { CronWorkflows } from '../src/operations/index.js';
import { startCountedController } from './counted-controller.js';
import { percentile, type Figure } from './figures.js';
import { writeFiguresSection } from './run-all.js';

const trivial = { entrypoint: 'main', templates: [{ name: 'main', container: { image: 'alpine:3', command: ['true'] } }] };

/** Median ms of `fn` over `n` calls. */
function median(n: number, fn: () => unknown): number {
  const xs: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    fn();
    xs.push(performance.now() - t);
  }
  return percentile(xs, 50);
}

/** The pure decisions: a catch-up of 100 runs after a year, the plan of 1,000 runs. */
export function cronDecisionFigures(): Figure[] {
  const now = Date.parse('2026-12-07T12:00:00Z');
  const cron = (spec: Partial<CronWorkflow['spec']>): CronWorkflow => ({
    metadata: { name: 'c', namespace: 'default', uid: 'u', creationTimestamp: '2025-01-01T00:00:00Z' },
    spec: { workflowSpec: trivial, ...spec } as CronWorkflow['spec'],
    status: { lastScheduledTime: '2025-12-07T12:00:00Z' },
  });
  const catchUp = cron({ schedule: '@every 1s', catchUp: { policy: 'All', maxRuns: 100 } });
  const parsed = schedulesOf(catchUp);
  const decide = median(50, () => decideCron(catchUp, [], now, parsed));
  const hourly = cron({ schedule: '0 * * * *' });
  const hs = schedulesOf(hourly);
  if (!hs.ok) throw new Error(hs.error);
  const range = { from: '2026-10-01T00:00:00Z', to: '2026-11-11T15:00:00Z' }; // 1,000 hourly times
  const plan = median(20, () => planBackfill(hourly, hs.schedules, range, now));
  return [
    {
      name: 'cron: catch-up decision, policy All, 100 runs after a year-long outage of @every 1s (median of 50)',
      value: Number(decide.toFixed(2)),
      unit: 'ms',
      goal: 'bounded by maxRuns, not by the outage',
      met: decide < 100,
    },
    {
      name: 'cron: planning a backfill of 1,000 hourly times (median of 20)',
      value: Number(plan.toFixed(2)),
      unit: 'ms',
      goal: 'bounded by the 1,000-run limit',
      met: plan < 1000,
    },
  ];
}

/** A backfill of `runs` hourly times, `parallel` at a time, from the request to Complete. */
async function backfillFigure(
  client: Awaited<ReturnType<typeof startCountedController>>['client'],
  runs: number,
  parallel: number,
): Promise<Figure> {
  const hour = 3600_000;
  const top = Math.floor(Date.now() / hour) * hour;
  await client.create(CRON_WORKFLOWS, 'default', {
    apiVersion: 'plugflow.io/v1alpha1',
    kind: 'CronWorkflow',
    metadata: { name: 'hourly' },
    spec: { schedule: '0 * * * *', workflowSpec: trivial },
  });
  const t0 = Date.now();
  const answer = await new CronWorkflows(client, 'default').backfill('hourly', {
    from: new Date(top - runs * hour).toISOString(),
    to: new Date(top - hour).toISOString(),
    parallel,
  });
  for (;;) {
    const c = await client.get<CronWorkflow>(CRON_WORKFLOWS, 'default', 'hourly');
    const s = c.status?.backfills?.[0];
    if (s?.phase === 'Complete') break;
    if (Date.now() - t0 > runs * 5000) throw new Error(`backfill not complete: ${JSON.stringify(s)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
  const secs = (Date.now() - t0) / 1000;
  return {
    name: `cron: backfill of ${answer.runs} hourly times, ${parallel} at a time, request → Complete (one trivial step each)`,
    value: Number(secs.toFixed(1)),
    unit: 's',
    goal: 'every run once',
    met: answer.runs === runs,
    note: `${(answer.runs / secs).toFixed(1)} runs/s`,
  };
}

export async function runCronBench(runs = 100): Promise<Figure[]> {
  const work = mkdtempSync(join(tmpdir(), 'plugflow-cron-bench-'));
  const stack = await startCountedController(work);
  const { client } = stack;
  const latencies = new Map<string, number>();
  const abort = new AbortController();
  const watching = client
    .watch(
      WORKFLOWS,
      { namespace: 'default', labelSelector: `${LABEL_CRON_WORKFLOW}=tick` },
      (e) => {
        const meta = (e.object as { metadata?: { name?: string; annotations?: Record<string, string> } }).metadata;
        const scheduled = Date.parse(meta?.annotations?.[ANNOTATION_SCHEDULED_TIME] ?? '');
        if (e.type === 'ADDED' && meta?.name && !latencies.has(meta.name) && !Number.isNaN(scheduled))
          latencies.set(meta.name, Date.now() - scheduled);
      },
      abort.signal,
    )
    .catch(() => {});
  const cron: CronWorkflow = {
    apiVersion: 'plugflow.io/v1alpha1',
    kind: 'CronWorkflow',
    metadata: { name: 'tick' },
    spec: {
      schedule: '* * * * * *',
      successfulJobsHistoryLimit: 0,
      failedJobsHistoryLimit: 0,
      workflowSpec: { entrypoint: 'main', templates: [{ name: 'main', container: { image: 'alpine:3', command: ['true'] } }] },
    },
  };
  try {
    await new Promise((r) => setTimeout(r, 500));
    const t0 = Date.now();
    await client.create(CRON_WORKFLOWS, 'default', cron);
    while (latencies.size < runs) {
      if (Date.now() - t0 > runs * 1000 + 60_000) throw new Error(`only ${latencies.size} of ${runs} runs were created`);
      await new Promise((r) => setTimeout(r, 250));
    }
    await client.mergePatch(CRON_WORKFLOWS, 'default', 'tick', { spec: { suspend: true } });
    const xs = [...latencies.values()].slice(0, runs);
    const [p50, p99] = [percentile(xs, 50), percentile(xs, 99)];
    const backfill = await backfillFigure(client, 100, 10);
    return [
      {
        name: `cron: scheduled time → workflow created, p99 over ${runs} runs of an every-second schedule`,
        value: Math.round(p99),
        unit: 'ms',
        goal: '< 1000 (a run per second keeps up)',
        met: p99 < 1000,
        note: `p50 ${Math.round(p50)} ms; ${latencies.size} runs seen`,
      },
      backfill,
      ...cronDecisionFigures(),
    ];
  } finally {
    abort.abort();
    await watching;
    await stack.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const t0 = Date.now();
  writeFiguresSection('cron', 'CronWorkflows (`npx tsx bench/cron-bench.ts`; also part of `make bench`)', await runCronBench(), t0);
}
