/** Times and durations as the list and panels show them. */

export function duration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '';
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${s % 60}s`;
  const h = Math.floor(m / 60);
  return `${h}h ${m % 60}m`;
}

/** From `startedAt` to `finishedAt`, or to now while it runs. */
export function elapsed(startedAt?: string, finishedAt?: string, now = Date.now()): string {
  if (!startedAt) return '';
  return duration((finishedAt ? Date.parse(finishedAt) : now) - Date.parse(startedAt));
}

/**
 * How long ago: in seconds under a minute, then in whole minutes, then hours and minutes — no
 * finer than the views re-render it (use-now.ts: every second under a minute, else every 30 s).
 */
export function ago(time?: string, now = Date.now()): string {
  if (!time) return '';
  const ms = now - Date.parse(time);
  if (!Number.isFinite(ms)) return '';
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.floor(s / 60)}m ago`;
  return `${duration(ms)} ago`;
}
