import { describe, expect, it } from 'vitest';
import type { WorkflowSpec } from '../api/index.js';
import { RetryError, retryWorkflow } from './retry-workflow.js';
import { World } from './test-world.js';

const c = (name: string) => ({ name, container: { image: 'busybox', command: ['sh', '-c', name] } });

/** a → (b, c in parallel) → d; with an exit handler. */
const steps: WorkflowSpec = {
  entrypoint: 'main',
  onExit: 'bye',
  templates: [
    {
      name: 'main',
      steps: [
        [{ name: 'a', template: 'a' }],
        [
          { name: 'b', template: 'b' },
          { name: 'c', template: 'c' },
        ],
        [{ name: 'd', template: 'd' }],
      ],
    },
    c('a'),
    c('b'),
    c('c'),
    c('d'),
    c('bye'),
  ],
};

/** Runs `world` until it ends, with `fail` failing once where named. */
function runToEnd(world: World, fail: Set<string> = new Set()): void {
  for (let i = 0; i < 50 && !['Succeeded', 'Failed', 'Error'].includes(world.status.phase ?? ''); i++) {
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

/** What a retry does in the world: the listed pods go, the status is the new one. */
function applyRetry(world: World, r: ReturnType<typeof retryWorkflow>): void {
  for (const p of r.podsToDelete) world.pods.delete(p);
  world.workflow.status = r.status;
}

describe('retryWorkflow', () => {
  it('re-runs the failed step and what had not run yet; keeps what succeeded; the exit handler runs again', () => {
    const w = new World(steps);
    runToEnd(w, new Set(['c']));
    expect(w.status.phase).toBe('Failed');
    expect(w.phaseOf('d')).toBeUndefined();
    const podsBefore = [...w.created.keys()];

    const r = retryWorkflow('ns/wf', 'wf', w.status);
    expect(r.rerun).toEqual(['c']);
    const podOf = (n: string) =>
      [...w.created].find(([, v]) => [w.status.nodes?.[v.nodeId]?.displayName, w.status.nodes?.[v.nodeId]?.name].includes(n))![0];
    expect(r.podsToDelete).toEqual([podOf('c'), podOf('wf.onExit')].sort());
    expect(r.status.phase).toBe('Running');
    expect(r.status.finishedAt).toBeUndefined();
    expect(Object.values(r.status.nodes ?? {}).map((n) => n.displayName)).not.toContain('wf.onExit');
    applyRetry(w, r);

    runToEnd(w);
    expect(w.status.phase).toBe('Succeeded');
    expect(w.phaseOf('d')).toBe('Succeeded');
    // a and b kept their pods: the only new pods are c again, d and the exit handler again.
    const newPods = [...w.created.keys()].filter((p) => !podsBefore.includes(p) || r.podsToDelete.includes(p));
    expect(newPods.map((p) => w.status.nodes?.[w.created.get(p)!.nodeId]?.displayName).sort()).toEqual(['c', 'd', 'onExit']);
  });

  it('only a workflow that ended Failed or Error; says why otherwise', () => {
    const w = new World(steps);
    runToEnd(w);
    expect(() => retryWorkflow('ns/wf', 'wf', w.status)).toThrow(
      'ns/wf is Succeeded: only a workflow that ended Failed or Error can be retried',
    );
    expect(() => retryWorkflow('ns/wf', 'wf', undefined)).toThrow(RetryError);
  });

  it('--restart-successful with a selector re-runs matching Succeeded steps too, and refuses a selector it cannot read', () => {
    const w = new World(steps);
    runToEnd(w, new Set(['c']));
    const r = retryWorkflow('ns/wf', 'wf', w.status, { restartSuccessful: true, selector: 'displayName=a' });
    expect(r.rerun).toEqual(['a', 'c']);
    expect(() => retryWorkflow('ns/wf', 'wf', w.status, { restartSuccessful: true, selector: 'phase=Failed' })).toThrow(
      'node field selector',
    );
    expect(() => retryWorkflow('ns/wf', 'wf', w.status, { selector: 'displayName=a' })).toThrow('needs --restart-successful');
  });

  it('a DAG: the failed task, and the tasks omitted because of it, run again', () => {
    const dag: WorkflowSpec = {
      entrypoint: 'main',
      templates: [
        {
          name: 'main',
          dag: {
            tasks: [
              { name: 'a', template: 'a' },
              { name: 'b', template: 'b', depends: 'a' },
              { name: 'c', template: 'c', depends: 'b' },
            ],
          },
        },
        c('a'),
        c('b'),
        c('c'),
      ],
    };
    const w = new World(dag);
    runToEnd(w, new Set(['b']));
    expect(w.status.phase).toBe('Failed');
    const r = retryWorkflow('ns/wf', 'wf', w.status);
    expect(r.rerun).toContain('b');
    applyRetry(w, r);
    runToEnd(w);
    expect(w.status.phase).toBe('Succeeded');
    expect(w.phaseOf('c')).toBe('Succeeded');
  });

  it('refuses plugin steps (their agent was told the workflow is complete), suggesting resubmit', () => {
    const status = {
      phase: 'Failed' as const,
      nodes: {
        r: { id: 'r', name: 'wf', displayName: 'wf', type: 'Steps' as const, phase: 'Failed' as const, children: ['p'] },
        p: { id: 'p', name: 'wf[0].call', displayName: 'call', type: 'Plugin' as const, phase: 'Failed' as const },
      },
    };
    expect(() => retryWorkflow('ns/wf', 'wf', status)).toThrow(
      'retrying plugin and http steps is not supported yet (call); resubmit it instead',
    );
  });
});
