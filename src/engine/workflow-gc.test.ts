import { describe, expect, it } from 'vitest';
import type { PodGC, TTLStrategy, WorkflowSpec } from '../api/index.js';
import { World } from './test-world.js';
import { selectorMatches, ttlSeconds } from './workflow-gc.js';
import { validateWorkflow } from './validate.js';

const two = (extra: Partial<WorkflowSpec>): World =>
  new World({
    entrypoint: 'main',
    ...extra,
    templates: [
      { name: 'main', steps: [[{ name: 'a', template: 'c' }], [{ name: 'b', template: 'c' }]] },
      { name: 'c', container: { image: 'alpine', command: ['true'] } },
    ],
  });

function gc(podGC: PodGC): World {
  return two({ podGC });
}

describe('spec.podGC', () => {
  it('OnPodCompletion: deletes each ended pod once its node has its result, failed ones too', () => {
    const w = two({ podGC: { strategy: 'OnPodCompletion' }, templates: [] });
    w.reconcile();
    const a = w.pod('a').podName;
    w.succeedPod('a');
    w.reconcile();
    expect(w.node('a').phase).toBe('Succeeded');
    expect(w.collected).toEqual([a]);
    w.reconcile();
    expect(w.node('a').phase).toBe('Succeeded'); // the vanished pod of a finished node is no error
    const b = w.pod('b').podName;
    w.failPod('b');
    w.reconcile();
    expect(w.status.phase).toBe('Failed');
    expect(w.collected).toEqual([a, b]);
  });

  it('OnPodSuccess keeps failed pods', () => {
    const w = gc({ strategy: 'OnPodSuccess' });
    w.reconcile();
    w.succeedPod('a');
    w.reconcile();
    w.failPod('b');
    w.reconcile();
    expect(w.collected).toEqual([w.created.keys().next().value]);
    expect(w.pods.has(w.pod('b').podName)).toBe(true);
  });

  it('OnWorkflowCompletion waits for the end of the workflow; OnWorkflowSuccess only after success', () => {
    for (const [strategy, fail, expected] of [
      ['OnWorkflowCompletion', true, 2],
      ['OnWorkflowSuccess', true, 0],
      ['OnWorkflowSuccess', false, 2],
    ] as const) {
      const w = gc({ strategy });
      w.reconcile();
      w.succeedPod('a');
      w.reconcile();
      expect(w.collected).toEqual([]);
      if (fail) w.failPod('b');
      else w.succeedPod('b');
      w.reconcile();
      expect(w.collected.length, `${strategy} fail=${fail}`).toBe(expected);
    }
  });

  it('deleteDelayDuration: asks to be requeued and deletes once the delay has passed, also after a restart', () => {
    const w = gc({ strategy: 'OnWorkflowCompletion', deleteDelayDuration: '30s' });
    w.reconcile();
    w.succeedPod('a');
    w.reconcile();
    w.succeedPod('b');
    w.reconcile();
    expect(w.status.phase).toBe('Succeeded');
    expect(w.collected).toEqual([]);
    expect(w.requeueAt).toBe(new Date(Date.parse(w.status.finishedAt!) + 30_000).toISOString());
    w.advance(29);
    w.reconcile(); // a finished workflow: only its stored finishedAt counts
    expect(w.collected).toEqual([]);
    w.advance(1);
    w.reconcile();
    expect(w.collected.length).toBe(2);
  });

  it('labelSelector restricts collection to the matching pods', () => {
    const w = gc({ strategy: 'OnPodCompletion', labelSelector: { matchLabels: { keep: 'no' } } });
    w.reconcile();
    w.pod('a').labels = { keep: 'no' };
    w.pod('a').phase = 'Succeeded';
    w.reconcile();
    w.pod('b').labels = { keep: 'yes' };
    w.succeedPod('b');
    w.reconcile();
    expect(w.collected.length).toBe(1);
    expect(w.pods.size).toBe(1);
  });

  it('matches selectors as Kubernetes does', () => {
    expect(selectorMatches(undefined, {})).toBe(true);
    expect(selectorMatches({ matchExpressions: [{ key: 'a', operator: 'In', values: ['1'] }] }, { a: '1' })).toBe(true);
    expect(selectorMatches({ matchExpressions: [{ key: 'a', operator: 'NotIn', values: ['1'] }] }, { a: '1' })).toBe(false);
    expect(selectorMatches({ matchExpressions: [{ key: 'a', operator: 'Exists' }] }, {})).toBe(false);
    expect(selectorMatches({ matchExpressions: [{ key: 'a', operator: 'DoesNotExist' }] }, {})).toBe(true);
    expect(selectorMatches({ matchLabels: { constructor: 'x' } }, {})).toBe(false);
  });

  it('refuses an unknown strategy, a bad delay and bad TTL seconds, naming the field', () => {
    const spec: WorkflowSpec = {
      entrypoint: 'c',
      podGC: { strategy: 'Sometimes', deleteDelayDuration: 'soon' },
      ttlStrategy: { secondsAfterSuccess: -1 },
      templates: [{ name: 'c', container: { image: 'alpine', command: ['true'] } }],
    };
    const msgs = validateWorkflow({ metadata: { name: 'wf' }, spec }, {}).map((e) => e.message);
    expect(msgs.join('\n')).toMatch(/spec\.podGC\.strategy must be one of OnPodCompletion/);
    expect(msgs.join('\n')).toMatch(/spec\.podGC\.deleteDelayDuration/);
    expect(msgs.join('\n')).toMatch(/spec\.ttlStrategy\.secondsAfterSuccess must be a whole number/);
  });
});

describe('spec.ttlStrategy', () => {
  it('picks the seconds by outcome, falling back to secondsAfterCompletion', () => {
    const ttl: TTLStrategy = { secondsAfterCompletion: 5, secondsAfterSuccess: 1 };
    expect(ttlSeconds(ttl, 'Succeeded')).toBe(1);
    expect(ttlSeconds(ttl, 'Failed')).toBe(5);
    expect(ttlSeconds({ secondsAfterFailure: 2 }, 'Error')).toBe(2);
    expect(ttlSeconds({ secondsAfterFailure: 2 }, 'Succeeded')).toBeUndefined();
  });

  it('deletes the finished workflow once its time has passed, from status.finishedAt (survives restarts)', () => {
    const w = two({ ttlStrategy: { secondsAfterSuccess: 10 } });
    w.reconcile();
    w.succeedPod('a');
    w.reconcile();
    w.succeedPod('b');
    w.reconcile();
    expect(w.workflowDeleted).toBeUndefined();
    expect(w.requeueAt).toBe(new Date(Date.parse(w.status.finishedAt!) + 10_000).toISOString());
    w.advance(10);
    w.reconcile();
    expect(w.workflowDeleted).toMatch(/10s after it ended Succeeded/);
  });

  it('deletes at once with 0 seconds, also a workflow that failed validation', () => {
    const w = new World({ entrypoint: 'nope', ttlStrategy: { secondsAfterFailure: 0 }, templates: [] });
    w.reconcile();
    expect(w.status.phase).toBe('Failed');
    expect(w.workflowDeleted).toBeDefined();
  });

  it('keeps a workflow without a matching entry', () => {
    const w = new World({ entrypoint: 'nope', ttlStrategy: { secondsAfterSuccess: 0 }, templates: [] });
    w.reconcile();
    expect(w.workflowDeleted).toBeUndefined();
    expect(w.requeueAt).toBeUndefined();
  });
});
