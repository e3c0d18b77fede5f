import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { afterEach, describe, expect, it } from 'vitest';
import { registerExprCommands, runEval, runTest, type Output } from './expr.js';

function sink(): Output & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return { stdout, stderr, out: (t) => stdout.push(t), err: (t) => stderr.push(t) };
}

const dir = mkdtempSync(join(tmpdir(), 'plugflow-expr-cli-'));
const SHARED_CASES = fileURLToPath(new URL('../expr/testdata/expr-cases.jsonl', import.meta.url));

describe('plugflow expr eval', () => {
  it('prints a selector result as JSON, building metadata from raw headers', () => {
    const io = sink();
    const env = JSON.stringify({ payload: { message: 'hi' }, headers: { 'X-Name': ['value'], Authorization: ['Bearer x'] } });
    const code = runEval(
      'selector',
      'payload.message != nil && metadata["x-name"] == ["value"] && !("authorization" in metadata)',
      env,
      io,
    );
    expect(code).toBe(0);
    expect(io.stdout).toEqual(['true']);
  });

  it('prints the error with its caret and exits 1', () => {
    const io = sink();
    expect(runEval('selector', 'payload.message', '{"payload": {"message": "garbage"}}', io)).toBe(1);
    expect(io.stderr.join('\n')).toBe(
      'selector must evaluate to a boolean, got string of 7 bytes at 1:1\n  payload.message\n  ^^^^^^^^^^^^^^^',
    );
    expect(io.stdout).toEqual([]);
  });

  it('evaluates every kind, reading the environment from a YAML or JSON file', () => {
    const yaml = join(dir, 'env.yaml');
    writeFileSync(yaml, 'steps.a.outputs.result: heads\ninputs.parameters.n: "3"\n');
    const deps = join(dir, 'tasks.json');
    writeFileSync(deps, JSON.stringify({ tasks: { A: { phase: 'Succeeded' }, 'b-c': { phase: 'Failed' } } }));
    const cases: [string, string, string | undefined, string][] = [
      ['when', '{{steps.a.outputs.result}} == heads', yaml, 'true'],
      ['template', 'n={{=asInt(inputs.parameters.n) * 2}}', yaml, '"n=6"'],
      ['depends', 'A && b-c.Failed', deps, 'true'],
      ['retry', 'asInt(lastRetry.exitCode) > 1', '{"lastRetry": {"exitCode": "2"}}', 'true'],
      ['value', '{"b": [1, 2.5], "a": nil}', undefined, '{"b":[1,2.5],"a":null}'],
      ['string', '"wf-" + x', '{"x": "1"}', '"wf-1"'],
    ];
    for (const [kind, source, env, want] of cases) {
      const io = sink();
      expect(runEval(kind, source, env, io), `${kind}: ${io.stderr.join('\n')}`).toBe(0);
      expect(io.stdout).toEqual([want]);
    }
  });

  it('explains a bad --env and a bad --kind', () => {
    let io = sink();
    expect(runEval('value', '1', '{oops', io)).toBe(1);
    expect(io.stderr[0]).toMatch(/^plugflow expr eval: --env: invalid JSON/);
    io = sink();
    expect(runEval('value', '1', join(dir, 'missing.json'), io)).toBe(1);
    expect(io.stderr[0]).toMatch(/is neither inline JSON .* nor an existing file/);
    io = sink();
    expect(runEval('nope', '1', undefined, io)).toBe(2);
    expect(io.stderr[0]).toMatch(/--kind must be one of selector, when, depends/);
  });
});

describe('plugflow expr test', () => {
  it('runs the shared cases file: every case passes', () => {
    const io = sink();
    expect(runTest(SHARED_CASES, io)).toBe(0);
    expect(io.stdout.length).toBe(1);
    expect(io.stdout[0]).toMatch(/^\d+ passed, 0 failed$/);
  });

  it('prints one line per failing case and the summary, and exits 1', () => {
    const file = join(dir, 'cases.jsonl');
    writeFileSync(
      file,
      [
        JSON.stringify({ expr: 'a == 1', env: { a: 1 }, expect: true, kind: 'expression' }),
        JSON.stringify({ expr: 'a == 1', env: { a: 2 }, expect: true, kind: 'expression' }),
        JSON.stringify({ expr: 'a +', env: {}, expect: { value: 1 }, kind: 'expression' }),
      ].join('\n'),
    );
    const io = sink();
    expect(runTest(file, io)).toBe(1);
    expect(io.stdout[0]).toBe(`FAIL ${file}:2 expression "a == 1": expected true, got false`);
    expect(io.stdout[1]).toMatch(
      new RegExp(
        `^FAIL ${file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}:3 expression "a \\+": expected 1, got error: expression: unexpected end of expression at 1:4`,
      ),
    );
    expect(io.stdout[2]).toBe('1 passed, 2 failed');
  });
});

describe('command wiring', () => {
  afterEach(() => {
    process.exitCode = undefined;
  });

  it('registers expr eval and expr test on the program', async () => {
    const io = sink();
    const program = new Command('plugflow').exitOverride();
    registerExprCommands(program, io);
    await program.parseAsync(['node', 'plugflow', 'expr', 'eval', '--kind', 'selector', '--env', '{"payload": {"n": 3}}', 'payload.n > 2']);
    expect(io.stdout).toEqual(['true']);
    expect(process.exitCode).toBe(0);
    await program.parseAsync(['node', 'plugflow', 'expr', 'eval', '-k', 'depends', '-e', '{"A": {"phase": "Failed"}}', 'A']);
    expect(io.stdout).toEqual(['true', 'false']);
  });
});
