/**
 * Fuzz target "expression cost": seeded hostile expressions (the reported cases, operators on
 * payload-sized values, and random nestings of every builtin over large ranges, strings, lists
 * and maps) evaluated one by one in a child process with a heap ceiling, under a watchdog.
 * Invariant: each finishes or throws an ExprError within 250 ms of CPU (the cheapest of up to
 * three runs of a breaching one, against preemption) and 64 MiB of heap; the child never dies (out of memory) and never goes silent (a hang). Needs no cluster.
 *
 *   npx tsx test/fuzz/expr-cost-fuzz.ts [per] [seed]   # alone; make fuzz runs it too
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Prng } from '../soak/prng.js';
import {
  CPU_BOUND_MS,
  hostileEnv,
  MEMORY_BOUND_MIB,
  measureExpression,
  OPERATOR_CASES,
  randomHostile,
  REPORTED_CASES,
  type CostSample,
} from './expr-hostile.js';
import { Tally } from './tally.js';

export const EXPR_COST_TARGET = `expression cost (each within ${CPU_BOUND_MS} ms CPU, ${MEMORY_BOUND_MIB} MiB)`;

/** Silence longer than this from the child is a hang. */
const WATCHDOG_MS = 10_000;
/** Hard heap ceiling of the child: its own data (~60 MiB) plus well over the bound. */
const CHILD_HEAP_MIB = 256;

export interface ExprCostSummary {
  tried: number;
  worstCpu: CostSample | null;
  worstHeap: CostSample | null;
}

/** Runs `per` random expressions (plus the fixed hostile cases) and records every breach in `tally`. */
export async function fuzzExpressionCost(
  rng: Prng,
  tally: Tally,
  per: number,
  say: (line: string) => void = () => {},
): Promise<ExprCostSummary> {
  const t = tally.of(EXPR_COST_TARGET);
  const summary: ExprCostSummary = { tried: 0, worstCpu: null, worstHeap: null };
  const file = fileURLToPath(import.meta.url);
  const child = spawn(
    process.execPath,
    ['--expose-gc', `--max-old-space-size=${CHILD_HEAP_MIB}`, '--import', 'tsx', file, '--child', String(rng.seed), String(per)],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-2000)));
  let last = 'before the first expression';
  let timer: NodeJS.Timeout | undefined;
  const arm = () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      tally.fail(EXPR_COST_TARGET, `no answer for ${WATCHDOG_MS} ms after ${last} (a hang): child killed`);
      child.kill('SIGKILL');
    }, WATCHDOG_MS);
  };
  arm();
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  for await (const line of createInterface({ input: child.stdout })) {
    arm();
    let s: CostSample;
    try {
      s = JSON.parse(line) as CostSample;
    } catch {
      continue; // not a sample (a warning of the runtime)
    }
    last = JSON.stringify(s.source.slice(0, 200));
    t.tried++;
    summary.tried++;
    if (s.outcome === 'value') t.accepted++;
    else t.rejected++;
    if (!summary.worstCpu || s.cpuMs > summary.worstCpu.cpuMs) summary.worstCpu = s;
    if (!summary.worstHeap || s.heapMiB > summary.worstHeap.heapMiB) summary.worstHeap = s;
    if (s.outcome === 'other-error') tally.fail(EXPR_COST_TARGET, `${s.message} from ${last}`);
    else if (/internal error/.test(s.message)) tally.fail(EXPR_COST_TARGET, `${s.message} from ${last}`);
    if (s.cpuMs > CPU_BOUND_MS) tally.fail(EXPR_COST_TARGET, `${s.cpuMs.toFixed(0)} ms of CPU (bound ${CPU_BOUND_MS}) for ${last}`);
    if (s.heapMiB > MEMORY_BOUND_MIB)
      tally.fail(EXPR_COST_TARGET, `${s.heapMiB.toFixed(1)} MiB of heap (bound ${MEMORY_BOUND_MIB}) for ${last}`);
  }
  const code = await exited;
  clearTimeout(timer);
  if (code !== 0)
    tally.fail(
      EXPR_COST_TARGET,
      `the evaluating process exited with ${code} after ${last}: ${stderr.trim().split('\n').slice(-3).join(' | ')}`,
    );
  say(
    `expression cost: ${summary.tried} expressions, worst ${summary.worstCpu?.cpuMs.toFixed(0)} ms CPU, ${summary.worstHeap?.heapMiB.toFixed(1)} MiB`,
  );
  return summary;
}

/** The child: evaluates and prints one JSON sample per line. */
function runChild(seed: number, per: number): void {
  const env = hostileEnv();
  const gc = (globalThis as { gc?: () => void }).gc;
  const rng = new Prng(seed);
  const sources = [...REPORTED_CASES, ...OPERATOR_CASES];
  for (let i = 0; i < per; i++) sources.push(randomHostile(() => rng.next(), 1 + (i % 4)));
  for (const source of sources) {
    const first = measureExpression(source, env, gc);
    let sample: CostSample = { ...first, error: undefined };
    // Over the CPU bound: measured again (at most twice) and the cheapest run kept, so a moment
    // of preemption on a busy machine is not taken for an expression's own cost. Deterministic
    // evaluation does the same work each time; a real breach breaches every time.
    for (let again = 0; again < 2 && sample.cpuMs > CPU_BOUND_MS; again++) {
      const retry = measureExpression(source, env, gc);
      if (retry.cpuMs < sample.cpuMs) sample = { ...retry, error: undefined };
    }
    const { error: _error, ...line } = sample;
    process.stdout.write(JSON.stringify(line) + '\n');
  }
}

if (process.argv[2] === '--child') {
  runChild(Number(process.argv[3]), Number(process.argv[4]));
} else if (import.meta.url === `file://${process.argv[1]}`) {
  const tally = new Tally();
  const per = Number(process.argv[2] ?? 300);
  const seed = Number(process.argv[3] ?? 7);
  const s = await fuzzExpressionCost(new Prng(seed), tally, per, console.log);
  const t = tally.of(EXPR_COST_TARGET);
  console.log(`${t.tried} tried, ${t.accepted} values, ${t.rejected} ExprErrors, ${t.failures.length} failures`);
  console.log(`worst CPU: ${s.worstCpu?.cpuMs.toFixed(0)} ms — ${s.worstCpu?.source.slice(0, 120)}`);
  console.log(`worst heap: ${s.worstHeap?.heapMiB.toFixed(1)} MiB — ${s.worstHeap?.source.slice(0, 120)}`);
  for (const f of t.failures) console.log(`FAIL ${f}`);
  process.exitCode = t.failures.length ? 1 : 0;
}
