import { describe, expect, it } from 'vitest';
import type { Workflow, WorkflowSpec } from '../api/index.js';
import { retryWorkflow } from '../engine/retry-workflow.js';
import { World } from '../engine/test-world.js';
import { OperationRefused } from './errors.js';
import { markFrom, nodeIdSelector, nodesFrom } from './retry-from.js';
import { planInput } from './retry.js';

const c = (name: string) => ({ name, container: { image: 'busybox', command: ['sh', '-c', name] } });

/** a → (b, c) → d in steps, b calling a DAG p → q, r; d fails once. */
const spec: WorkflowSpec = {
  entrypoint: 'main',
  templates: [
    {
      name: 'main',
      steps: [
        [{ name: 'a', template: 'x' }],
        [
          { name: 'b', template: 'dag' },
          { name: 'c', template: 'x' },
        ],
        [{ name: 'd', template: 'x' }],
      ],
    },
    {
      name: 'dag',
      dag: {
        tasks: [
          { name: 'p', template: 'x' },
          { name: 'q', template: 'x', depends: 'p' },
          { name: 'r', template: 'x' },
        ],
      },
    },
    c('x'),
  ],
};

function runToEnd(world: World, fail: Set<string> = new Set()): void {
  for (let i = 0; i < 60 && !['Succeeded', 'Failed', 'Error'].includes(world.status.phase ?? ''); i++) {
    world.reconcile();
    for (const pod of world.pods.values()) {
      if (pod.phase !== 'Pending') continue;
      const node = world.status.nodes?.[pod.nodeId];
      if (node && fail.has(node.displayName)) {
        world.failPod(node.displayName);
        fail.delete(node.displayName);
      } else if (node) world.succeedPod(node.displayName);
    }
  }
}

const idOf = (w: World, displayName: string) => Object.values(w.status.nodes ?? {}).find((n) => n.displayName === displayName)!.id;
const names = (w: World, ids: Iterable<string>) => [...ids].map((id) => w.status.nodes![id]!.displayName).sort();
/** Display names of the pods created since `before` (a count of w.created). */
const podsSince = (w: World, before: string[]) =>
  [...w.created]
    .filter(([p]) => !before.includes(p))
    .map(([, v]) => w.status.nodes?.[v.nodeId]?.displayName)
    .sort();

describe('retry from a node', () => {
  it('reads only the selector id=<node>', () => {
    expect(nodeIdSelector('id=wf-123')).toBe('wf-123');
    expect(nodeIdSelector('displayName=a')).toBeUndefined();
    expect(nodeIdSelector(undefined)).toBeUndefined();
  });

  it('the node, what it contains, its dependents, and what follows every step around it — not what ran before', () => {
    const w = new World(spec);
    runToEnd(w, new Set(['d']));
    expect(w.status.phase).toBe('Failed');
    // From the DAG task p (inside step b): q depends on it; then step b is done again, so step d follows.
    expect(names(w, nodesFrom(w.status.nodes!, idOf(w, 'p')))).toEqual(['[2]', 'd', 'p', 'q']);
    // From step b: the DAG it runs, then the next group.
    expect(names(w, nodesFrom(w.status.nodes!, idOf(w, 'b')))).toEqual(['[2]', 'b', 'd', 'p', 'q', 'r']);
    // From step a: everything after it.
    expect(names(w, nodesFrom(w.status.nodes!, idOf(w, 'a')))).toEqual(['[1]', '[2]', 'a', 'b', 'c', 'd', 'p', 'q', 'r']);
    expect(() => markFrom('Workflow ns/wf', w.status, 'nope')).toThrow(OperationRefused);
  });

  it.each([
    ['p', ['d', 'p', 'q']],
    ['q', ['d', 'q']],
    ['c', ['c', 'd']],
  ])('from %s runs again exactly that node and what follows, and the workflow succeeds', (from, rerun) => {
    const w = new World(spec);
    runToEnd(w, new Set(['d']));
    const before = [...w.created.keys()];
    const wf = { ...w.workflow, metadata: { name: 'wf', namespace: 'ns' } } as Workflow;
    const [status, options] = planInput('Workflow ns/wf', wf, { restartSuccessful: true, selector: `id=${idOf(w, from)}` });
    const plan = retryWorkflow('ns/wf', 'wf', status, options);
    expect(plan.rerun).toEqual(rerun);
    for (const p of plan.podsToDelete) w.pods.delete(p);
    w.workflow.status = plan.status;
    runToEnd(w);
    expect(w.status.phase).toBe('Succeeded');
    // Everything else kept its result: no new pods for it.
    expect(
      podsSince(
        w,
        before.filter((p) => !plan.podsToDelete.includes(p)),
      ),
    ).toEqual(rerun);
  });

  it('needs restartSuccessful, like every node field selector; a workflow that did not fail is refused by the engine', () => {
    const w = new World(spec);
    runToEnd(w);
    const wf = { ...w.workflow, metadata: { name: 'wf', namespace: 'ns' } } as Workflow;
    expect(() => planInput('Workflow ns/wf', wf, { selector: 'id=x' })).toThrow('needs --restart-successful');
    const [status, options] = planInput('Workflow ns/wf', wf, { restartSuccessful: true, selector: `id=${idOf(w, 'a')}` });
    expect(() => retryWorkflow('ns/wf', 'wf', status, options)).toThrow('only a workflow that ended Failed or Error can be retried');
  });
});
