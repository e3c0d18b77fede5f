/**
 * `plugflow stop|terminate|suspend|resume|retry|resubmit|wait NAME`: operations on an existing
 * workflow, through a plugflow server (`--server`, REST `PUT …/{name}/{operation}`) or straight
 * to Kubernetes with the kubeconfig — both run src/operations with the rights of whoever asks.
 */
import type { Command } from 'commander';
import { FINAL_WORKFLOW_PHASES } from '../api/index.js';
import { errorMessage } from '../log/error-message.js';
import { OperationRefused } from '../operations/index.js';
import { RestError } from './rest-client.js';
import { consolePrinter, follow, withConnectionFlags, type CommonFlags } from './rest.js';
import { renderTree } from './tree.js';
import { backendFor, type WorkflowOperation } from './workflow-backend.js';

type Printer = typeof consolePrinter;

function parameters(list: string[] | undefined): Record<string, string> | undefined {
  if (!list?.length) return undefined;
  const out: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const p of list) {
    const eq = p.indexOf('=');
    if (eq <= 0) throw new Error(`-p/--set expects name=value, got "${p}"`);
    out[p.slice(0, eq)] = p.slice(eq + 1);
  }
  return out;
}

/**
 * A refusal — the workflow is not in a state the operation applies to (409, code 9) or the
 * arguments are wrong (400, code 3) — is exit code 1 with its reason; other errors throw.
 */
function refused(err: unknown): boolean {
  return (
    err instanceof OperationRefused ||
    (err instanceof RestError && ((err.status === 409 && err.code === 9) || (err.status === 400 && err.code === 3)))
  );
}

const DONE: Record<WorkflowOperation['kind'], string> = {
  stop: 'stopping (exit handlers run)',
  terminate: 'terminating (exit handlers do not run)',
  suspend: 'suspended (running steps finish, no new step starts)',
  resume: 'resumed',
  resubmit: 'resubmitted',
  retry: 'retried: its failed steps run again',
};

export async function runOperation(name: string, op: WorkflowOperation, flags: CommonFlags, p: Printer = consolePrinter): Promise<number> {
  const b = backendFor(flags);
  const ns = flags.namespace ?? 'default';
  try {
    const wf = await b.operate(ns, name, op);
    if (op.kind === 'resubmit') p.out(`Workflow ${ns}/${name} resubmitted as ${ns}/${wf.metadata.name ?? '?'}`);
    else p.out(`Workflow ${ns}/${name} ${DONE[op.kind]}`);
    return 0;
  } catch (err) {
    if (!refused(err)) throw err;
    p.err(errorMessage(err).replace(/^PUT \S+: (409|400) /, ''));
    return 1;
  } finally {
    await b.close();
  }
}

/** Waits for workflows to finish; prints each one's phase; exit code 0 only if all Succeeded. */
export async function runWait(names: string[], flags: CommonFlags & { timeout?: string }, p: Printer = consolePrinter): Promise<number> {
  const b = backendFor(flags);
  const ns = flags.namespace ?? 'default';
  const seconds = Number(flags.timeout ?? 0);
  if (!Number.isFinite(seconds) || seconds < 0)
    throw new Error(`--timeout must be a number of seconds ≥ 0 (0 waits without limit), got "${flags.timeout}"`);
  let ok = true;
  try {
    for (const name of names) {
      const waiting = follow(b, ns, name, false, p);
      const wf = seconds
        ? await Promise.race([waiting, new Promise<undefined>((r) => setTimeout(() => r(undefined), seconds * 1000).unref())])
        : await waiting;
      if (!wf) {
        p.err(`Workflow ${ns}/${name} has not finished after ${seconds}s`);
        return 2;
      }
      const phase = wf.status?.phase ?? '';
      p.out(`Workflow ${ns}/${name} ${phase}${wf.status?.message ? `: ${wf.status.message}` : ''}`);
      if (phase !== 'Succeeded') {
        ok = false;
        if (flags.output === 'tree') p.out(renderTree(wf));
      }
      if (!FINAL_WORKFLOW_PHASES.includes(phase)) ok = false;
    }
  } finally {
    await b.close();
  }
  return ok ? 0 : 1;
}

const collect = (v: string, prev: string[]) => [...prev, v];
const done = (code: number) => {
  process.exitCode = code;
};

export function registerWorkflowOperationCommands(program: Command): void {
  const simple: [WorkflowOperation['kind'] & ('stop' | 'terminate' | 'suspend'), string][] = [
    ['stop', 'stop a running workflow: no new step starts, running ones are stopped, exit handlers run'],
    ['terminate', 'terminate a running workflow at once: running steps are stopped, exit handlers do not run'],
    ['suspend', 'suspend a running workflow: running steps finish, no new step starts until resume'],
  ];
  for (const [kind, description] of simple) {
    withConnectionFlags(program.command(`${kind} <name>`).description(description)).action(async (name: string, flags: CommonFlags) =>
      done(await runOperation(name, { kind }, flags)),
    );
  }
  withConnectionFlags(
    program.command('resume <name>').description('resume a suspended workflow (all waiting suspend steps, or one with --node)'),
  )
    .option('--node <name>', 'resume only the suspend step with this name or display name')
    .option('-p, --parameter <name=value>', 'value of an output parameter declared with valueFrom.supplied (repeatable)', collect, [])
    .option('--set <name=value>', 'the same as --parameter', collect, [])
    .action(async (name: string, flags: CommonFlags & { node?: string; parameter?: string[]; set?: string[] }) =>
      done(
        await runOperation(
          name,
          { kind: 'resume', node: flags.node, parameters: parameters([...(flags.parameter ?? []), ...(flags.set ?? [])]) },
          flags,
        ),
      ),
    );
  withConnectionFlags(program.command('resubmit <name>').description('submit a new workflow with the spec (and labels) of an existing one'))
    .option('-p, --parameter <name=value>', 'a new value for one of its arguments (repeatable)', collect, [])
    .option('--memoized', "keep the old run's succeeded steps, run only the rest (a Failed or Error workflow; no -p)")
    .action(async (name: string, flags: CommonFlags & { parameter?: string[]; memoized?: boolean }) =>
      done(await runOperation(name, { kind: 'resubmit', memoized: flags.memoized, parameters: parameters(flags.parameter) }, flags)),
    );
  withConnectionFlags(
    program.command('retry <name>').description("run a Failed or Error workflow's failed steps again, keeping what succeeded"),
  )
    .option('--restart-successful', 'also run again the Succeeded steps --node-field-selector picks')
    .option('--node-field-selector <selector>', 'displayName=<step>, name=<node> or templateName=<template>')
    .action(async (name: string, flags: CommonFlags & { restartSuccessful?: boolean; nodeFieldSelector?: string }) =>
      done(
        await runOperation(name, { kind: 'retry', restartSuccessful: flags.restartSuccessful, selector: flags.nodeFieldSelector }, flags),
      ),
    );
  withConnectionFlags(program.command('wait <names...>').description('wait until workflows finish; exit code 0 only if all Succeeded'))
    .option('--timeout <seconds>', 'give up after this long (exit code 2); 0 waits without limit', '0')
    .action(async (names: string[], flags: CommonFlags & { timeout?: string }) => done(await runWait(names, flags)));
}

/** `plugflow resume` as before (kept for callers): 0 resumed, 1 nothing waiting. */
export function runResume(
  name: string,
  flags: CommonFlags & { node?: string; parameter?: string[] },
  out: (l: string) => void = (l) => console.log(l),
): Promise<number> {
  return runOperation(name, { kind: 'resume', node: flags.node, parameters: parameters(flags.parameter) }, flags, { out, err: out });
}
