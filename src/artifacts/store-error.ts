/** A failure of an object or blob store, its message naming the location and what to check. */
export class StoreError extends Error {}

/** The words both drivers use for a missing object: a directory stored without archive is looked for then. */
export const NO_SUCH_OBJECT = 'no object has that key';

let retryReporter: ((line: string) => void) | undefined;

/**
 * Where each failed attempt of a store request that will be retried is told (s3.ts): the pod
 * side sets its container log, so `plugflow logs` shows a step retrying an unreachable store;
 * its requests then also get the idle timeout (s3.ts STORE_TIMEOUTS). Unset elsewhere (the
 * server). Kept here, away from the SDK, so setting it loads nothing.
 */
export function reportStoreRetries(report: ((line: string) => void) | undefined): void {
  retryReporter = report;
}

export function storeRetryReporter(): ((line: string) => void) | undefined {
  return retryReporter;
}
