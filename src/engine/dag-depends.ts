/**
 * When a DAG task may run: its `depends` expression, or its `dependencies` list turned into one.
 *
 * `dependencies: [a, b]` means `a && b`: each finished well (Succeeded, Skipped or Daemoned), or
 * failed/errored while having `continueOn` for that — the depends language applies a
 * dependency's `continueOn` to a bare name, which the DAG executor passes along with the phase.
 * A task with neither field runs at once.
 */
import type { DAGTask } from '../api/index.js';
import { compileDependsText, type CompiledDepends } from './expressions.js';

/** The depends expression of a task, or undefined when it waits for nothing. */
export function dependsText(task: DAGTask): string | undefined {
  if (task.depends !== undefined && task.depends.trim() !== '') return task.depends;
  const deps = task.dependencies ?? [];
  if (deps.length === 0) return undefined;
  return deps.join(' && ');
}

/** Compiled depends of every task; compile errors are thrown (the validator reports them first). */
export function compileTaskDepends(tasks: readonly DAGTask[], where: string): Map<string, CompiledDepends | undefined> {
  const out = new Map<string, CompiledDepends | undefined>();
  for (const t of tasks) {
    const text = dependsText(t);
    out.set(t.name, text === undefined ? undefined : compileDependsText(text, `${where}.dag.tasks[${t.name}].depends`));
  }
  return out;
}
