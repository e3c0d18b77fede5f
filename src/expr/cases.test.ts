import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CASE_KINDS, runCasesText } from './cases.js';

// The team's shared expression cases, carried in the repository (testdata/, a copy of the
// shared list) so a plain clone runs them. Resolved from this file, not the working directory.
const CASES = fileURLToPath(new URL('./testdata/expr-cases.jsonl', import.meta.url));

describe('shared expression cases (src/expr/testdata/expr-cases.jsonl)', () => {
  it('the cases file exists', () => {
    expect(existsSync(CASES), `missing ${CASES}`).toBe(true);
  });

  const results = existsSync(CASES) ? runCasesText(readFileSync(CASES, 'utf8')) : [];

  it('has cases of every kind', () => {
    const kinds = new Set(results.map((r) => r.case?.kind));
    for (const k of CASE_KINDS) {
      expect(kinds.has(k), `no case of kind ${k}`).toBe(true);
    }
    expect(results.length).toBeGreaterThanOrEqual(100);
  });

  for (const r of results) {
    it(`line ${r.line}: [${r.case?.kind}] ${r.case?.expr.replace(/\s+/g, ' ').slice(0, 80)}`, () => {
      expect(r.problem ?? null).toBeNull();
      expect(r.passed).toBe(true);
    });
  }
});

describe('case runner', () => {
  it('reports a wrong expectation, a non-JSON line and an unknown kind as failures', () => {
    const text = [
      JSON.stringify({ expr: '1 == 1', env: {}, expect: false, kind: 'expression' }),
      '{not json',
      JSON.stringify({ expr: '1', env: {}, expect: true, kind: 'nope' }),
      JSON.stringify({ expr: '1 +', env: {}, expect: 'error', kind: 'expression' }),
      JSON.stringify({ expr: '[1, 2]', env: {}, expect: { value: [1, 2] }, kind: 'expression' }),
    ].join('\n');
    const rs = runCasesText(text);
    expect(rs.map((r) => r.passed)).toEqual([false, false, false, true, true]);
    expect(rs[0].problem).toBe('expected false, got true');
    expect(rs[1].problem).toMatch(/not valid JSON/);
    expect(rs[2].problem).toMatch(/field "kind" must be one of/);
  });

  it('expects an error to be an expression error, not any exception', () => {
    const rs = runCasesText(JSON.stringify({ expr: 'payload.x', env: { payload: 5 }, expect: 'error', kind: 'event_selector' }));
    expect(rs[0].passed).toBe(true);
    expect(rs[0].actual).toMatch(/cannot read "x" of float/);
  });
});
