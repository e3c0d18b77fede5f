/**
 * One worker of the controller: takes keys from the work queue and runs the reconciler of their
 * kind (a workflow, or a CronWorkflow behind CRON_KEY_PREFIX), then queues them again as the
 * outcome asks — at once, at a time, or after a backoff when the reconcile failed.
 *
 * With several active replicas (sharding.ts) a key this replica does not own is dropped, and a
 * workflow handed over to the coordinator (HandedOver) is not retried here.
 */
import type { Logger } from '../log/logger.js';
import { errorMessage } from '../log/error-message.js';
import { CRON_KEY_PREFIX } from './cron-reconciler.js';
import type { FeatureOutcome } from './features/index.js';
import type { ControllerMetrics } from './metrics.js';
import { HandedOver, type Sharding } from './sharding.js';
import type { WorkQueue } from './work-queue.js';

export interface WorkerDeps {
  queue: WorkQueue;
  reconcileWorkflow: (key: string) => Promise<FeatureOutcome>;
  reconcileCron: (key: string) => Promise<FeatureOutcome>;
  metrics: ControllerMetrics;
  log: Logger;
  sharding?: Sharding;
}

/** Runs until the queue is shut down. */
export async function runWorker({ queue, reconcileWorkflow, reconcileCron, metrics, log, sharding }: WorkerDeps): Promise<void> {
  for (;;) {
    const key = await queue.get();
    if (key === undefined) return;
    // Another replica's share (or one that moved away since it was queued): not ours to touch.
    if (sharding && !sharding.owns(key)) {
      const wf = sharding.workflowOf(key);
      if (wf) await sharding.release(wf);
      queue.forget(key);
      queue.done(key);
      continue;
    }
    const t0 = process.hrtime.bigint();
    let result = 'success';
    try {
      const outcome = key.startsWith(CRON_KEY_PREFIX)
        ? await reconcileCron(key.slice(CRON_KEY_PREFIX.length))
        : await reconcileWorkflow(key);
      queue.forget(key);
      if (outcome.requeueNow) queue.add(key);
      if (outcome.requeueAtMs !== undefined) queue.addAfter(key, Math.max(0, outcome.requeueAtMs - Date.now()));
    } catch (err) {
      if (err instanceof HandedOver) {
        log.info('workflow handed over to the coordinator replica (it takes synchronization locks)', { workflow: key });
        queue.forget(key);
        continue;
      }
      result = 'error';
      log.warn('reconcile failed; retrying with backoff', { workflow: key, error: errorMessage(err), retries: queue.retries(key) });
      queue.addRateLimited(key);
    } finally {
      metrics.reconcileDuration.observe({ result }, Number(process.hrtime.bigint() - t0) / 1e9);
      queue.done(key);
    }
  }
}
