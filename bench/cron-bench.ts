/**
 * CronWorkflow schedule → workflow created latency (issue 13): a CronWorkflow on an every-second
 * schedule, 100 runs; for each, the time from its scheduled time (the run's annotation) to this
 * process seeing the Workflow ADDED on a watch (same machine clock). Own control plane, the local
 * pod runner as the kubelet (the runs are one trivial step; the history limits delete them).
 *
 *   npx tsx bench/cron-bench.ts     (also part of `make bench`)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ANNOTATION_SCHEDULED_TIME, LABEL_CRON_WORKFLOW, type CronWorkflow } from '../src/api/index.js';
import { CRON_WORKFLOWS, WORKFLOWS } from '../src/kube/resource.js';
import { startCountedController } from './counted-controller.js';
import { percentile, type Figure } from './figures.js';
import { writeFiguresSection } from './run-all.js';

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
    return [
      {
        name: `cron: scheduled time → workflow created, p99 over ${runs} runs of an every-second schedule`,
        value: Math.round(p99),
        unit: 'ms',
        goal: '< 1000 (a run per second keeps up)',
        met: p99 < 1000,
        note: `p50 ${Math.round(p50)} ms; ${latencies.size} runs seen in ${((Date.now() - t0) / 1000).toFixed(0)} s`,
      },
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
