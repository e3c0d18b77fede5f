/**
 * The clock for views that show relative times ("3m ago") and running durations: these change
 * with time alone, so the view renders again on a timer — every second while the youngest time
 * shown is under a minute old, else every 30 s — and nothing is fetched again.
 */
import { useEffect, useState } from 'preact/hooks';

/** How long until the next render, for the age of the youngest time shown. */
export function tickAfter(ageMs: number): number {
  if (ageMs < 60_000) return 1000 - (Math.max(0, ageMs) % 1000) || 1000;
  return 30_000;
}

/** The youngest of the times (ISO strings or ms), or undefined when there is none. */
export function youngest(times: Iterable<string | number | undefined>): number | undefined {
  let max: number | undefined;
  for (const t of times) {
    const ms = typeof t === 'string' ? Date.parse(t) : t;
    if (ms !== undefined && Number.isFinite(ms) && (max === undefined || ms > max)) max = ms;
  }
  return max;
}

/** Now, rendering again on the timer while `since` (the youngest time shown, in ms) is set. */
export function useNow(since: number | undefined): number {
  const [, setTick] = useState(0);
  const now = Date.now();
  useEffect(() => {
    if (since === undefined) return;
    const timer = setTimeout(() => setTick((t) => t + 1), tickAfter(Date.now() - since));
    return () => clearTimeout(timer);
  });
  return now;
}
