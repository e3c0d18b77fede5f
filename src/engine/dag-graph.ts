/**
 * The dependency graph of a DAG template: which task waits for which, cycles, the tasks a
 * `target` needs, and a stable order to visit tasks in.
 *
 * The graph is built from task names only; where the names come from (`dependencies` or the
 * names a `depends` expression mentions) is the caller's business, so this file needs no
 * expression language.
 */

export interface DagGraph {
  /** Task names in declaration order. */
  readonly tasks: readonly string[];
  /** Task → the tasks it waits for (declaration order, no duplicates). */
  readonly dependencies: ReadonlyMap<string, readonly string[]>;
  /** Task → the tasks that wait for it (declaration order). */
  readonly dependents: ReadonlyMap<string, readonly string[]>;
}

/** Builds the graph. Unknown dependency names are kept; `unknownDependencies` reports them. */
export function buildDagGraph(tasks: ReadonlyArray<{ name: string; dependsOn: readonly string[] }>): DagGraph {
  const names = tasks.map((t) => t.name);
  const dependencies = new Map<string, string[]>();
  const dependents = new Map<string, string[]>(names.map((n) => [n, []]));
  for (const t of tasks) {
    const deps = [...new Set(t.dependsOn)];
    dependencies.set(t.name, deps);
    for (const d of deps) dependents.get(d)?.push(t.name);
  }
  return { tasks: names, dependencies, dependents };
}

/** Pairs (task, missing name) for dependencies that name no task. */
export function unknownDependencies(graph: DagGraph): Array<{ task: string; missing: string }> {
  const known = new Set(graph.tasks);
  const out: Array<{ task: string; missing: string }> = [];
  for (const t of graph.tasks) {
    for (const d of graph.dependencies.get(t) ?? []) if (!known.has(d)) out.push({ task: t, missing: d });
  }
  return out;
}

/**
 * The first cycle found, as a path that starts and ends with the same task (`a → b → a`), or
 * undefined. Depth-first search in declaration order, so the answer is stable.
 */
export function findCycle(graph: DagGraph): string[] | undefined {
  const state = new Map<string, 'visiting' | 'done'>();
  const stack: string[] = [];
  const visit = (task: string): string[] | undefined => {
    const s = state.get(task);
    if (s === 'done') return undefined;
    if (s === 'visiting') return [...stack.slice(stack.indexOf(task)), task];
    state.set(task, 'visiting');
    stack.push(task);
    for (const d of graph.dependencies.get(task) ?? []) {
      if (!graph.dependencies.has(d)) continue;
      const cycle = visit(d);
      if (cycle) return cycle;
    }
    stack.pop();
    state.set(task, 'done');
    return undefined;
  };
  for (const t of graph.tasks) {
    const cycle = visit(t);
    if (cycle) return cycle;
  }
  return undefined;
}

/** Splits a `target` field (`"a b"`, `"a,b"`) into task names. */
export function parseTargets(target: string | undefined): string[] {
  if (!target) return [];
  return target.split(/[\s,]+/).filter((t) => t !== '');
}

/** The targets and everything they transitively depend on; all tasks when there is no target. */
export function tasksNeededFor(graph: DagGraph, targets: readonly string[]): Set<string> {
  if (targets.length === 0) return new Set(graph.tasks);
  const needed = new Set<string>();
  const walk = (t: string): void => {
    if (needed.has(t) || !graph.dependencies.has(t)) return;
    needed.add(t);
    for (const d of graph.dependencies.get(t) ?? []) walk(d);
  };
  for (const t of targets) walk(t);
  return needed;
}

/** Tasks in an order where every task comes after its dependencies; ties keep declaration order. */
export function topologicalOrder(graph: DagGraph): string[] {
  const indegree = new Map(graph.tasks.map((t) => [t, (graph.dependencies.get(t) ?? []).filter((d) => graph.dependencies.has(d)).length]));
  const out: string[] = [];
  const ready = graph.tasks.filter((t) => indegree.get(t) === 0);
  while (ready.length > 0) {
    const t = ready.shift()!;
    out.push(t);
    for (const child of graph.dependents.get(t) ?? []) {
      const left = indegree.get(child)! - 1;
      indegree.set(child, left);
      if (left === 0) {
        // Keep declaration order among newly ready tasks.
        const pos = ready.findIndex((r) => graph.tasks.indexOf(r) > graph.tasks.indexOf(child));
        if (pos === -1) ready.push(child);
        else ready.splice(pos, 0, child);
      }
    }
  }
  return out;
}
