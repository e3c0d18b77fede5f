/** Bounded parallelism for the applier's API writes (pod creations and deletions of one reconcile). */

/** Runs `fn` over `items`, at most `limit` at a time; rejects with the first failure after all settled. */
export async function inParallel<T, R>(items: readonly T[], fn: (item: T) => Promise<R>, limit = 16): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let failure: unknown;
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      try {
        results[i] = await fn(items[i]);
      } catch (err) {
        failure ??= err;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  if (failure !== undefined) throw failure;
  return results;
}
