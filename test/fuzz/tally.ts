/**
 * Per-target counts of a fuzz run: inputs tried, accepted, rejected with a message that names
 * the problem, and failures (crash, hang, 5xx, a rejection that says nothing), each failure with
 * the input that caused it so it can be replayed.
 */
export interface TargetTally {
  target: string;
  tried: number;
  accepted: number;
  rejected: number;
  failures: string[];
  /** Outcomes worth reporting that are not failures of the contract (see where they are raised). */
  warnings: string[];
}

export class Tally {
  readonly targets = new Map<string, TargetTally>();

  of(target: string): TargetTally {
    let t = this.targets.get(target);
    if (!t) this.targets.set(target, (t = { target, tried: 0, accepted: 0, rejected: 0, failures: [], warnings: [] }));
    return t;
  }

  fail(target: string, what: string): void {
    const t = this.of(target);
    if (t.failures.length < 50) t.failures.push(what);
    else if (t.failures.length === 50) t.failures.push('… (further failures not listed)');
  }

  warn(target: string, what: string): void {
    const t = this.of(target);
    if (t.warnings.length < 20) t.warnings.push(what);
  }

  all(): TargetTally[] {
    return [...this.targets.values()];
  }

  failures(): number {
    return this.all().reduce((s, t) => s + t.failures.length, 0);
  }
}

/** Whether a 4xx body names the problem: JSON with a `message` of some substance. */
export function namesProblem(body: string): string | undefined {
  try {
    const v = JSON.parse(body) as { message?: unknown };
    if (typeof v?.message === 'string' && v.message.trim().length >= 8) return v.message;
  } catch {
    // not JSON
  }
  return undefined;
}
