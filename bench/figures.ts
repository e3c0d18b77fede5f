/** One measured figure with its goal, printed the same way by every benchmark. */
export interface Figure {
  name: string;
  value: number;
  unit: string;
  goal: string;
  met: boolean;
  note?: string;
}

export function printFigures(title: string, figures: Figure[]): void {
  console.log(`\n== ${title}`);
  for (const f of figures) {
    console.log(`${f.name}: ${f.value} ${f.unit}   goal ${f.goal}   ${f.met ? 'MET' : 'NOT MET'}${f.note ? `   (${f.note})` : ''}`);
  }
}

/** The p-th percentile (nearest rank) of `xs`, which need not be sorted. */
export function percentile(xs: readonly number[], p: number): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}
