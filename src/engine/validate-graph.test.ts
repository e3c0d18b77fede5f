/**
 * Validation of large DAG and steps templates: linear work, no recursion on the length of a
 * dependency chain, and a cap on tasks/steps per template that names the field (issue 10 item
 * 4: a 10,000-task chain overflowed the stack, and 5,000 + 6,000 tasks took 11 s).
 */
import { describe, expect, it } from 'vitest';
import type { DAGTask, Template, Workflow } from '../api/index.js';
import { ancestors, buildDagGraph, findCycle, tasksNeededFor, topologicalOrder } from './dag-graph.js';
import { validateWorkflow } from './validate.js';
import { MAX_DAG_TASKS, MAX_STEPS } from './validate-calls.js';

const echo: Template = {
  name: 'echo',
  inputs: { parameters: [{ name: 'msg' }] },
  container: { image: 'alpine', args: ['{{inputs.parameters.msg}}'] },
};

function dagWorkflow(tasks: DAGTask[]): Workflow {
  return { metadata: { name: 'wf', namespace: 'ns' }, spec: { entrypoint: 'main', templates: [{ name: 'main', dag: { tasks } }, echo] } };
}

/** t0 ← t1 ← … ← t(n-1), each passing on the previous task's id. */
function chain(n: number, from = 0): DAGTask[] {
  return Array.from({ length: n }, (_, i) => ({
    name: `t${from + i}`,
    template: 'echo',
    ...(i > 0 ? { depends: `t${from + i - 1}` } : {}),
    arguments: { parameters: [{ name: 'msg', value: i > 0 ? `{{tasks.t${from + i - 1}.id}}` : 'x' }] },
  }));
}

function timed<T>(f: () => T): { value: T; ms: number } {
  const start = performance.now();
  const value = f();
  return { value, ms: performance.now() - start };
}

describe('validation of large graphs', () => {
  it('refuses the reported 5,000-task chain plus 6,000 dependents at once, naming the field', () => {
    const tasks = [
      ...chain(5000),
      ...Array.from({ length: 6000 }, (_, i) => ({
        name: `f${i}`,
        template: 'echo',
        depends: 't4999',
        arguments: { parameters: [{ name: 'msg', value: '{{tasks.t0.id}}' }] },
      })),
    ];
    const { value, ms } = timed(() => validateWorkflow(dagWorkflow(tasks)).map((e) => e.message));
    expect(value).toEqual([
      `spec.templates[main].dag.tasks has 11000 tasks; a DAG template may have at most ${MAX_DAG_TASKS} (use withItems/withParam for fan-out, or split it into several templates)`,
    ]);
    // A hang guard, not a timing: the size check comes first, so this is milliseconds; walking the
    // graph first took minutes. The bound leaves room for a loaded CI machine.
    expect(ms).toBeLessThan(5000);
  });

  it('refuses a 10,000-task chain without overflowing the stack', () => {
    const messages = validateWorkflow(dagWorkflow(chain(10_000))).map((e) => e.message);
    expect(messages).toHaveLength(1);
    expect(messages[0]).toMatch(/^spec\.templates\[main\]\.dag\.tasks has 10000 tasks/);
  });

  it('validates a chain at the cap, every task referring to its predecessor, quickly', () => {
    const { value, ms } = timed(() => validateWorkflow(dagWorkflow(chain(MAX_DAG_TASKS))));
    expect(value).toEqual([]);
    // A hang guard (a quadratic walk takes minutes here), with room for a loaded CI machine.
    expect(ms).toBeLessThan(15_000);
  });

  it('still refuses a reference to a task that is not an ancestor', () => {
    const tasks = [...chain(500), ...chain(499, 500)];
    tasks[700].arguments!.parameters![0].value = '{{tasks.t10.id}}';
    expect(validateWorkflow(dagWorkflow(tasks)).map((e) => e.message)).toEqual([
      'spec.templates[main].dag.tasks[t700].arguments.parameters[0].value refers to {{tasks.t10.id}} but task "t10" is not among the tasks "t700" depends on',
    ]);
  });

  it('refuses a steps template over the cap, naming the field', () => {
    const steps = Array.from({ length: MAX_STEPS + 1 }, (_, i) => [
      { name: `s${i}`, template: 'echo', arguments: { parameters: [{ name: 'msg', value: 'x' }] } },
    ]);
    const wf: Workflow = {
      metadata: { name: 'wf', namespace: 'ns' },
      spec: { entrypoint: 'main', templates: [{ name: 'main', steps }, echo] },
    };
    expect(validateWorkflow(wf).map((e) => e.message)).toEqual([
      `spec.templates[main].steps has ${MAX_STEPS + 1} steps; a steps template may have at most ${MAX_STEPS} (use withItems/withParam for fan-out, or split it into several templates)`,
    ]);
  });
});

describe('graph helpers on long chains (no recursion)', () => {
  const n = 100_000;
  const graph = buildDagGraph(Array.from({ length: n }, (_, i) => ({ name: `t${i}`, dependsOn: i > 0 ? [`t${i - 1}`] : [] })));

  it("find no cycle, order, and collect a target's ancestors", () => {
    expect(findCycle(graph)).toBeUndefined();
    expect(topologicalOrder(graph)[n - 1]).toBe(`t${n - 1}`);
    expect(tasksNeededFor(graph, [`t${n - 1}`]).size).toBe(n);
  });

  it('find a cycle closing a long chain', () => {
    const cyclic = buildDagGraph(Array.from({ length: n }, (_, i) => ({ name: `t${i}`, dependsOn: [`t${(i + n - 1) % n}`] })));
    const cycle = findCycle(cyclic)!;
    expect(cycle).toHaveLength(n + 1);
    expect(cycle[0]).toBe(cycle[n]);
  });

  it('answers ancestry', () => {
    const small = buildDagGraph([
      { name: 'a', dependsOn: [] },
      { name: 'b', dependsOn: ['a'] },
      { name: 'c', dependsOn: ['b'] },
      { name: 'd', dependsOn: [] },
    ]);
    const after = ancestors(small);
    expect([after('c', 'a'), after('c', 'b'), after('a', 'c'), after('c', 'd'), after('c', 'c')]).toEqual([
      true,
      true,
      false,
      false,
      false,
    ]);
  });
});
