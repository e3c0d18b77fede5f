import { ExprError } from './errors.js';
import { DEFAULT_LIMITS } from './limits.js';

/**
 * The `depends` dialect of DAG tasks: task names (which may contain `-`), optionally with a
 * result (`A.Succeeded`, `A.Failed`, `A.Errored`, `A.Skipped`, `A.Omitted`, `A.Daemoned`,
 * `A.AnySucceeded`, `A.AllFailed`), combined with `&&`, `||`, `!` and parentheses. A bare `A`
 * means `A.Succeeded || A.Skipped || A.Daemoned`, plus Failed/Errored when the task continues on
 * failure/error. Words like `and`/`not` are task names here, as in the peer, so they fail as
 * unknown tasks rather than silently meaning something else.
 */

export const TASK_RESULTS = ['Succeeded', 'Failed', 'Errored', 'Skipped', 'Omitted', 'Daemoned', 'AnySucceeded', 'AllFailed'] as const;
export type TaskResult = (typeof TASK_RESULTS)[number];

/** What `depends` needs to know about a dependency. */
export interface DependencyState {
  /** Node phase: Pending, Running, Succeeded, Failed, Error, Skipped, Omitted. */
  phase: string;
  /** Whether the task's node is a daemon (a daemoned task counts once it is no longer Pending). */
  daemoned?: boolean;
  /** Phases of the children of a task group (loops: withItems/withParam). */
  children?: ReadonlyArray<string | { phase: string }>;
  type?: string;
  continueOn?: { failed?: boolean; error?: boolean };
}

type DNode =
  | { k: 'ref'; task: string; result: TaskResult | null; s: number; e: number }
  | { k: 'not'; a: DNode; s: number; e: number }
  | { k: 'and' | 'or'; l: DNode; r: DNode; s: number; e: number };

export interface CompiledDepends {
  readonly text: string;
  /** Every task the expression names, in order of first appearance (the engine waits for them). */
  readonly taskNames: readonly string[];
  evaluate(tasks: Readonly<Record<string, DependencyState>>): boolean;
}

const WHAT = 'depends';
const NAME = /[A-Za-z0-9_][A-Za-z0-9_-]*/y;

function fail(text: string, code: 'syntax' | 'unknown-name' | 'limit', reason: string, s: number, e = s + 1): never {
  throw new ExprError({ code, what: WHAT, reason, source: text, offset: s, length: Math.max(1, e - s) });
}

export function compileDepends(text: string): CompiledDepends {
  if (typeof text !== 'string') throw new ExprError({ code: 'syntax', what: WHAT, reason: `depends must be a string, got ${typeof text}` });
  if (text.length > DEFAULT_LIMITS.maxSourceLength)
    fail(text, 'limit', `depends is longer than ${DEFAULT_LIMITS.maxSourceLength} characters`, 0);
  let i = 0;
  let depth = 0;
  const names: string[] = [];
  const skip = (): void => {
    while (i < text.length && /\s/.test(text[i])) i++;
  };
  const at = (s: string): boolean => {
    skip();
    return text.startsWith(s, i);
  };
  const or = (): DNode => {
    let l = and();
    while (at('||')) {
      const s = i;
      i += 2;
      const r = and();
      l = { k: 'or', l, r, s, e: s + 2 };
    }
    return l;
  };
  const and = (): DNode => {
    let l = unary();
    while (at('&&')) {
      const s = i;
      i += 2;
      const r = unary();
      l = { k: 'and', l, r, s, e: s + 2 };
    }
    return l;
  };
  const unary = (): DNode => {
    skip();
    const s = i;
    if (text[i] === '!') {
      if (++depth > 100) fail(text, 'limit', 'depends is nested more than 100 levels deep', s);
      i++;
      const a = unary();
      depth--;
      return { k: 'not', a, s, e: s + 1 };
    }
    if (text[i] === '(') {
      if (++depth > 100) fail(text, 'limit', 'depends is nested more than 100 levels deep', s);
      i++;
      const inner = or();
      skip();
      if (text[i] !== ')')
        fail(
          text,
          'syntax',
          i >= text.length ? `missing ")" for the "(" at column ${s + 1}` : `expected ")" but found ${JSON.stringify(text[i])}`,
          i,
        );
      i++;
      depth--;
      return inner;
    }
    NAME.lastIndex = i;
    const m = NAME.exec(text);
    if (!m) {
      if (i >= text.length) fail(text, 'syntax', 'expected a task name but the expression ended', Math.max(0, text.length - 1));
      fail(text, 'syntax', `expected a task name, found ${JSON.stringify(text[i])} (operators are &&, || and !)`, i);
    }
    const task = m[0];
    i += task.length;
    let result: TaskResult | null = null;
    if (text[i] === '.') {
      const rs = i + 1;
      const rm = /[A-Za-z]+/y;
      rm.lastIndex = rs;
      const word = rm.exec(text)?.[0] ?? '';
      if (!(TASK_RESULTS as readonly string[]).includes(word)) {
        fail(
          text,
          'syntax',
          `unknown task result ${JSON.stringify(word || text[rs] || '')} of ${task} (expected one of ${TASK_RESULTS.join(', ')})`,
          rs,
          rs + Math.max(1, word.length),
        );
      }
      result = word as TaskResult;
      i = rs + word.length;
    }
    if (!names.includes(task)) names.push(task);
    return { k: 'ref', task, result, s, e: i };
  };

  skip();
  if (i >= text.length) fail(text, 'syntax', 'depends is empty', 0);
  const root = or();
  skip();
  if (i < text.length) fail(text, 'syntax', `unexpected ${JSON.stringify(text[i])} (operators are &&, || and !)`, i);
  return { text, taskNames: names, evaluate: (tasks) => evalNode(text, root, tasks) };
}

function childPhases(state: DependencyState): string[] {
  return (state.children ?? []).map((c) => (typeof c === 'string' ? c : c.phase));
}

/** The truth of `task.result` for a dependency in the given state. */
export function taskResult(state: DependencyState, result: TaskResult): boolean {
  switch (result) {
    case 'Succeeded':
      return state.phase === 'Succeeded';
    case 'Failed':
      return state.phase === 'Failed';
    case 'Errored':
      return state.phase === 'Error';
    case 'Skipped':
      return state.phase === 'Skipped';
    case 'Omitted':
      return state.phase === 'Omitted';
    case 'Daemoned':
      return state.daemoned === true && state.phase !== 'Pending';
    case 'AnySucceeded':
      return childPhases(state).some((p) => p === 'Succeeded');
    case 'AllFailed': {
      const phases = childPhases(state);
      return phases.length > 0 && phases.every((p) => p === 'Failed');
    }
  }
}

function evalNode(text: string, n: DNode, tasks: Readonly<Record<string, DependencyState>>): boolean {
  switch (n.k) {
    case 'not':
      return !evalNode(text, n.a, tasks);
    case 'and':
      return evalNode(text, n.l, tasks) && evalNode(text, n.r, tasks);
    case 'or':
      return evalNode(text, n.l, tasks) || evalNode(text, n.r, tasks);
    case 'ref': {
      const state = Object.hasOwn(tasks, n.task) ? tasks[n.task] : undefined;
      if (!state || typeof state !== 'object' || typeof state.phase !== 'string') {
        const known = Object.keys(tasks);
        return fail(
          text,
          'unknown-name',
          `depends refers to task ${JSON.stringify(n.task)}, which is not a task of this DAG${known.length ? ` (tasks: ${known.slice(0, 12).join(', ')})` : ''}`,
          n.s,
          n.e,
        );
      }
      if (n.result) return taskResult(state, n.result);
      return (
        taskResult(state, 'Succeeded') ||
        taskResult(state, 'Skipped') ||
        taskResult(state, 'Daemoned') ||
        (state.continueOn?.failed === true && taskResult(state, 'Failed')) ||
        (state.continueOn?.error === true && taskResult(state, 'Errored'))
      );
    }
  }
}
