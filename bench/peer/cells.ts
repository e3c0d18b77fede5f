/** The side-by-side benches' table cells: the median of repeated runs with their range, and ratios. */

export const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? (s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2) : NaN;
};

/** `median (min–max)` with `d` decimals, or `—` when there were no runs. */
export const medianCell = (xs: number[], d = 0): string =>
  xs.length ? `${median(xs).toFixed(d)} (${Math.min(...xs).toFixed(d)}–${Math.max(...xs).toFixed(d)})` : '—';

/** `a / b` as `0.91×`, or `—` when it is not a number. */
export const ratio = (a: number, b: number): string => (Number.isFinite(a / b) ? `${(a / b).toFixed(2)}×` : '—');
