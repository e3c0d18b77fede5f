import { existsSync, readFileSync } from 'node:fs';
import { type Command, Option } from 'commander';
import { readYamlDocument } from '../yaml/kube-yaml.js';
import {
  compileBoolean,
  compileDepends,
  compileString,
  compileValue,
  eventMetadataFromHeaders,
  evaluateWhen,
  ExprError,
  renderTemplate,
  runCasesText,
  type DependencyState,
} from '../expr/index.js';
import { errorMessage } from '../log/error-message.js';

/**
 * `plugflow expr eval` and `plugflow expr test`: try an expression (a binding selector before
 * deploying it, a `when`, a `depends`, a template) against an environment, or run a file of
 * cases. The work is done by functions that write to an Output and return the exit code, so
 * the commands are tested without spawning processes.
 */

export const EVAL_KINDS = ['selector', 'when', 'depends', 'retry', 'template', 'value', 'string'] as const;
export type EvalKind = (typeof EVAL_KINDS)[number];

export interface Output {
  out(text: string): void;
  err(text: string): void;
}

const processOutput: Output = {
  out: (t) => process.stdout.write(t + '\n'),
  err: (t) => process.stderr.write(t + '\n'),
};

/** Reads `--env`: inline JSON (starting with `{`) or a JSON/YAML file. */
export function loadEnv(spec: string | undefined): Record<string, unknown> {
  if (spec === undefined) return {};
  const text = spec.trim();
  let value: unknown;
  if (text.startsWith('{')) {
    try {
      value = JSON.parse(text);
    } catch (err) {
      throw new Error(`--env: invalid JSON: ${errorMessage(err)}`);
    }
  } else {
    if (!existsSync(spec)) throw new Error(`--env: ${spec} is neither inline JSON (starting with "{") nor an existing file`);
    const content = readFileSync(spec, 'utf8');
    try {
      value = /\.ya?ml$/i.test(spec) ? readYamlDocument(content, spec) : JSON.parse(content);
    } catch (err) {
      if (/\.json$/i.test(spec)) throw new Error(`--env: ${spec} is not valid JSON: ${errorMessage(err)}`);
      try {
        value = readYamlDocument(content, spec);
      } catch (yamlErr) {
        throw new Error(`--env: ${spec} is neither valid JSON nor YAML: ${errorMessage(yamlErr)}`);
      }
    }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new Error('--env must be a JSON/YAML object of names to values');
  return value as Record<string, unknown>;
}

/** Evaluates `source` as the given kind; the result is what `expr eval` prints as JSON. */
export function evaluateKind(kind: EvalKind, source: string, env: Record<string, unknown>): unknown {
  switch (kind) {
    case 'selector': {
      // Raw `headers` (as a client would send them) are turned into `metadata` like the server does.
      const { headers, ...rest } = env as { headers?: Record<string, string | string[]>; metadata?: unknown };
      const selectorEnv =
        headers !== undefined && rest.metadata === undefined ? { ...rest, metadata: eventMetadataFromHeaders(headers) } : env;
      return compileBoolean(source, 'selector').evaluate(selectorEnv);
    }
    case 'retry':
      return compileBoolean(source, 'retry expression').evaluate(env);
    case 'when':
      return evaluateWhen(source, env);
    case 'depends': {
      const tasks = (typeof env.tasks === 'object' && env.tasks !== null ? env.tasks : env) as Record<string, DependencyState>;
      return compileDepends(source).evaluate(tasks);
    }
    case 'template':
      return renderTemplate(source, env);
    case 'string':
      return compileString(source, 'expression').evaluate(env);
    case 'value':
      return compileValue(source, 'expression').evaluate(env);
  }
}

export function runEval(kind: string, source: string, envSpec: string | undefined, io: Output): number {
  if (!(EVAL_KINDS as readonly string[]).includes(kind)) {
    io.err(`plugflow expr eval: --kind must be one of ${EVAL_KINDS.join(', ')}, got ${JSON.stringify(kind)}`);
    return 2;
  }
  try {
    const result = evaluateKind(kind as EvalKind, source, loadEnv(envSpec));
    io.out(JSON.stringify(result ?? null));
    return 0;
  } catch (err) {
    if (err instanceof ExprError || err instanceof Error) {
      io.err(err instanceof ExprError ? err.message : `plugflow expr eval: ${err.message}`);
      return 1;
    }
    throw err;
  }
}

export function runTest(file: string, io: Output): number {
  if (!existsSync(file)) {
    io.err(`plugflow expr test: ${file} does not exist`);
    return 1;
  }
  const results = runCasesText(readFileSync(file, 'utf8'));
  let failed = 0;
  for (const r of results) {
    if (r.passed) continue;
    failed++;
    const what = r.case ? ` ${r.case.kind} ${JSON.stringify(r.case.expr)}` : '';
    io.out(`FAIL ${file}:${r.line}${what}: ${r.problem ?? ''}`);
  }
  io.out(`${results.length - failed} passed, ${failed} failed`);
  return failed > 0 || results.length === 0 ? 1 : 0;
}

export function registerExprCommands(program: Command, io: Output = processOutput): void {
  const expr = program.command('expr').description('try expressions: event selectors, when, depends, retry, templates');
  expr
    .command('eval')
    .description('evaluate an expression and print the result as JSON (exit code 1 and the error on failure)')
    .addOption(new Option('-k, --kind <kind>', 'how the expression is used').choices([...EVAL_KINDS]).default('value'))
    .option(
      '-e, --env <FILE|JSON>',
      'the environment: inline JSON or a JSON/YAML file (for selectors: payload, metadata or headers, discriminator, namespace)',
    )
    .argument('<expr>', 'the expression (or template, when, depends text)')
    .action((source: string, opts: { kind: string; env?: string }) => {
      process.exitCode = runEval(opts.kind, source, opts.env, io);
    });
  expr
    .command('test')
    .description('run a file of expression cases (JSON lines: expr, env, expect, kind) and print failures and a summary')
    .argument('<file>', 'cases file, e.g. src/expr/testdata/expr-cases.jsonl')
    .action((file: string) => {
      process.exitCode = runTest(file, io);
    });
}
