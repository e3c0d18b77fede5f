import { describe, expect, it } from 'vitest';
import { everyBuiltinCall, hostileEnv, measureExpression, OPERATOR_CASES, REPORTED_CASES } from '../../test/fuzz/expr-hostile.js';
import { BUILTINS } from './builtins.js';
import { compile } from './compile.js';
import { ExprError } from './errors.js';
import type { ExprLimits } from './limits.js';
import { SPRIG } from './sprig.js';
import { renderTemplate } from './template.js';

/**
 * The expression-cost bound (issue 10 item 3): whatever the expression and its input, an
 * evaluation finishes or fails with an ExprError that names the limit, in bounded CPU and memory.
 * The CPU and heap figures measured here are generous sanity bounds (the unit project runs files
 * in parallel on a shared machine); the precise bound is measured by the fuzz target and the bench.
 */

const env = hostileEnv();
const SANE_CPU_MS = 2000;
const SANE_HEAP_MIB = 256;

function expectBounded(source: string, vars: Record<string, unknown> = env, limits?: Partial<ExprLimits>): ExprError | null {
  const sample = measureExpression(source, vars, undefined, limits);
  expect(sample.outcome, `${source}: ${sample.message}`).not.toBe('other-error');
  expect(sample.cpuMs, `${source} took ${sample.cpuMs} ms of CPU`).toBeLessThan(SANE_CPU_MS);
  expect(sample.heapMiB, `${source} grew the heap by ${sample.heapMiB} MiB`).toBeLessThan(SANE_HEAP_MIB);
  return sample.outcome === 'value' ? null : (sample.error as ExprError);
}

describe('expression cost: the reported cases stop with a limit error', () => {
  for (const source of REPORTED_CASES) {
    it(source.slice(0, 100), () => {
      const err = expectBounded(source);
      expect(err).toBeInstanceOf(ExprError);
      expect(err?.code).toBe('limit');
      expect(err?.reason).toMatch(/more than 1000000 steps|more than 32 MiB|longer than 1048576 characters/);
    });
  }

  it('sprig.replace and sprig.indent fail before building an oversized string (no RangeError)', () => {
    for (const source of [
      'sprig.replace("a", repeat("b", 100000), repeat("a", 100000))',
      'sprig.indent(100000, repeat("\\n", 100000))',
      'sprig.nindent(1000, NL)',
    ]) {
      const err = expectBounded(source);
      expect(err?.code, source).toBe('limit');
      expect(err?.reason, source).toMatch(/would build a string longer than 1048576 characters|more than 1000000 steps/);
    }
  });

  it('the same expression in a {{=…}} template fails as an expression error', () => {
    const t0 = process.cpuUsage();
    expect(() => renderTemplate('{{=let L = 0..399999; count(0..1999, len(sprig.reverse(L)) > 0)}}', {})).toThrow(
      /more than 1000000 steps/,
    );
    const cpu = process.cpuUsage(t0);
    expect((cpu.user + cpu.system) / 1000).toBeLessThan(SANE_CPU_MS);
  });

  it('the limits are the documented ones, and the messages name them', () => {
    expect(compile('1').limits).toMatchObject({ maxSteps: 1_000_000, maxMemory: 32 << 20, maxStringLength: 1 << 20 });
    expect(expectBounded('len(0..999999)')?.reason).toMatch(/evaluation took more than 1000000 steps/);
    expect(expectBounded('map(0..99, repeat("ab", 100000))', env, { maxMemory: 1 << 20 })?.reason).toMatch(
      /evaluation would build more than 1 MiB of values/,
    );
  });
});

describe('expression cost: results', () => {
  it('a result that shares its parts (2^60 paths) is converted once per part', () => {
    const source = Array.from({ length: 60 }, (_, i) => `let v${i + 1} = [v${i}, v${i}];`).join(' ') + ' v60';
    const t0 = process.cpuUsage();
    const out = compile(`let v0 = [1]; ${source}`).evaluate({}) as unknown[];
    const cpu = process.cpuUsage(t0);
    expect(out[0]).toBe(out[1]);
    expect((cpu.user + cpu.system) / 1000).toBeLessThan(SANE_CPU_MS);
  });
});

describe('expression cost: operators and language forms on large values', () => {
  for (const source of OPERATOR_CASES) it(source.slice(0, 100), () => void expectBounded(source));
});

describe('expression cost: every builtin with huge inputs', () => {
  it('every builtin declares how it is charged', () => {
    for (const [name, def] of [...Object.entries(BUILTINS), ...Object.entries(SPRIG)]) {
      expect(['pick', 'scan', 'build'], name).toContain(def.cost);
    }
  });

  // One test per builtin (each runs its calls: large values in every argument, once and in a
  // loop of 10,000 keeping every result), so a failure names the builtin. The budgets are a
  // twentieth and a sixteenth of the defaults to keep the file fast: what is checked is that every call is charged for what
  // it does (a call that is not runs long whatever the budget); the fuzz target and the bench
  // measure the full bound with the default limits.
  const calls = everyBuiltinCall(['L', 'S', 'M', 'LS', 'D', 'NL', 'J']);
  const small: Partial<ExprLimits> = { maxSteps: 50_000, maxMemory: 2 << 20 };
  const byName = new Map<string, string[]>();
  for (const call of calls) {
    const name = /^(?:map\(0\.\.9999, )?([\w.]+)\(/.exec(call)?.[1] ?? call;
    byName.set(name, [...(byName.get(name) ?? []), call]);
  }
  for (const [name, list] of byName) {
    it(`${name}: ${list.length} calls, each a value or an ExprError within the bound`, async () => {
      const t0 = process.cpuUsage();
      for (const source of list) {
        expectBounded(source, env, small);
        await new Promise((resolve) => setImmediate(resolve)); // lets the test runner talk to its worker
      }
      const cpu = process.cpuUsage(t0);
      expect((cpu.user + cpu.system) / 1000 / list.length, `${name}: mean CPU per call`).toBeLessThan(100);
    });
  }
});
