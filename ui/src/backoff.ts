/** Waits before reconnecting to the server: 1 s, 2 s, 4 s … at most 30 s (`attempt` counts from 0). */
export function backoff(attempt: number): number {
  return Math.min(30_000, 1000 * 2 ** Math.max(0, Math.min(attempt, 15)));
}
