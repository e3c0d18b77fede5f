/** Polls `cond` every few milliseconds until it holds; fails naming the wait after `timeoutMs`. Test support. */
export async function eventually(cond: () => boolean | Promise<boolean>, timeoutMs = 1000, what = 'condition'): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > until) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 2));
  }
}
