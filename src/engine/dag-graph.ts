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
 * undefined. Depth-first search in declaration order, so the answer is stable. Iterative (an
 * explicit stack): a chain of user-supplied length never deepens the call stack.
 */
export function findCycle(graph: DagGraph): string[] | undefined {
  const state = new Map<string, 'visiting' | 'done'>();
  for (const root of graph.tasks) {
    if (state.has(root)) continue;
    // path[i] is a task being visited; next[i] is the index of its next dependency to look at.
    const path: string[] = [root];
    const next: number[] = [0];
    const onPath = new Map<string, number>([[root, 0]]);
    state.set(root, 'visiting');
    while (path.length > 0) {
      const top = path.length - 1;
      const task = path[top];
      const deps = graph.dependencies.get(task) ?? [];
      if (next[top] >= deps.length) {
        path.pop();
        next.pop();
        onPath.delete(task);
        state.set(task, 'done');
        continue;
      }
      const d = deps[next[top]++];
      if (!graph.dependencies.has(d)) continue;
      const at = onPath.get(d);
      if (at !== undefined) return [...path.slice(at), d];
      if (state.get(d) === 'done') continue;
      state.set(d, 'visiting');
      onPath.set(d, path.length);
      path.push(d);
      next.push(0);
    }
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
  const todo = [...targets];
  while (todo.length > 0) {
    const t = todo.pop()!;
    if (needed.has(t) || !graph.dependencies.has(t)) continue;
    needed.add(t);
    for (const d of graph.dependencies.get(t) ?? []) if (!needed.has(d)) todo.push(d);
  }
  return needed;
}

/**
 * Tasks in an order where every task comes after its dependencies; ties keep declaration order.
 * Tasks on a cycle are left out. O((tasks + edges) · log tasks): a heap of ready tasks keyed by
 * declaration index.
 */
export function topologicalOrder(graph: DagGraph): string[] {
  const index = new Map(graph.tasks.map((t, i) => [t, i]));
  const indegree = new Map(graph.tasks.map((t) => [t, (graph.dependencies.get(t) ?? []).filter((d) => graph.dependencies.has(d)).length]));
  const ready = new MinHeap();
  graph.tasks.forEach((t, i) => indegree.get(t) === 0 && ready.push(i));
  const out: string[] = [];
  while (ready.size > 0) {
    const t = graph.tasks[ready.pop()];
    out.push(t);
    for (const child of graph.dependents.get(t) ?? []) {
      const left = indegree.get(child)! - 1;
      indegree.set(child, left);
      if (left === 0) ready.push(index.get(child)!);
    }
  }
  return out;
}

/**
 * Which task runs after which, transitively: `ancestors(graph)` answers "does `task` depend,
 * directly or not, on `other`?" in constant time. Built in topological order, one bit set per
 * task (each the union of its dependencies' sets), so the cost is O(tasks · edges / 32) words
 * with no recursion, however long the chains; validation caps tasks per DAG (MAX_DAG_TASKS in
 * validate-calls.ts), which bounds it. Only meaningful for a graph without cycles.
 */
export function ancestors(graph: DagGraph): (task: string, other: string) => boolean {
  const index = new Map(graph.tasks.map((t, i) => [t, i]));
  const words = (graph.tasks.length + 31) >>> 5;
  const sets = new Map<string, Uint32Array>();
  for (const t of topologicalOrder(graph)) {
    const set = new Uint32Array(words);
    for (const d of graph.dependencies.get(t) ?? []) {
      const i = index.get(d);
      if (i === undefined) continue;
      set[i >>> 5] |= 1 << (i & 31);
      const parent = sets.get(d);
      if (parent) for (let w = 0; w < words; w++) set[w] |= parent[w];
    }
    sets.set(t, set);
  }
  return (task, other) => {
    const set = sets.get(task);
    const i = index.get(other);
    return set !== undefined && i !== undefined && (set[i >>> 5] & (1 << (i & 31))) !== 0;
  };
}

/** A binary min-heap of numbers (declaration indexes). */
class MinHeap {
  private readonly items: number[] = [];
  get size(): number {
    return this.items.length;
  }
  push(v: number): void {
    const a = this.items;
    a.push(v);
    let i = a.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (a[p] <= a[i]) break;
      [a[p], a[i]] = [a[i], a[p]];
      i = p;
    }
  }
  pop(): number {
    const a = this.items;
    const top = a[0];
    const last = a.pop()!;
    if (a.length > 0) {
      a[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < a.length && a[l] < a[m]) m = l;
        if (r < a.length && a[r] < a[m]) m = r;
        if (m === i) break;
        [a[m], a[i]] = [a[i], a[m]];
        i = m;
      }
    }
    return top;
  }
}
