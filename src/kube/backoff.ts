/**
 * Exponential backoff with jitter: the delay before attempt n+1 after n consecutive failures.
 * Shared by the informer (watch restarts) and the work queue (reconcile retries) so both back off
 * the same, predictable way. Pure: the random source is injectable.
 */
export interface BackoffPolicy {
  /** Delay after the first failure. */
  initialMs: number;
  /** Upper bound of the delay. */
  maxMs: number;
  /** Growth per failure (2 doubles). */
  factor?: number;
  /** Fraction of the delay added at random (0.2 → up to +20 %), so restarts do not stampede. */
  jitter?: number;
}

/** Delay after `failures` consecutive failures (1 = the first failure). */
export function backoffDelay(policy: BackoffPolicy, failures: number, random: () => number = Math.random): number {
  if (failures <= 0) return 0;
  const factor = policy.factor ?? 2;
  const base = Math.min(policy.maxMs, policy.initialMs * factor ** Math.min(failures - 1, 64));
  const jitter = policy.jitter ?? 0;
  return Math.round(Math.min(policy.maxMs * (1 + jitter), base * (1 + jitter * random())));
}

/** Resolves after `ms`, or at once when the signal aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
