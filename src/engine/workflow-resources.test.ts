import { describe, expect, it } from 'vitest';
import type { WorkflowSpec } from '../api/index.js';
import { World } from './test-world.js';
import { validateWorkflow } from './validate.js';

const spec = (extra: Partial<WorkflowSpec>): WorkflowSpec => ({
  entrypoint: 'c',
  volumeClaimTemplates: [
    { metadata: { name: 'work' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Mi' } } } },
  ],
  templates: [{ name: 'c', container: { image: 'alpine', command: ['true'], volumeMounts: [{ name: 'work', mountPath: '/work' }] } }],
  ...extra,
});

describe('volumeClaimTemplates and podDisruptionBudget', () => {
  it('creates the claims and the budget before the first pod, and stops asking once a pod is seen', () => {
    const w = new World(spec({ podDisruptionBudget: { minAvailable: 1 } }));
    w.reconcile();
    expect(w.lastActions.map((a) => a.kind)).toEqual(['createPVC', 'createPDB', 'createPod']);
    expect(w.claims).toEqual(new Set(['work']));
    w.reconcile();
    expect(w.lastActions.map((a) => a.kind)).toEqual([]);
  });

  it('OnWorkflowSuccess (default) keeps the claims of a failed workflow; the budget always goes', () => {
    const w = new World(spec({ podDisruptionBudget: { maxUnavailable: 0 } }));
    w.reconcile();
    w.failPod('wf');
    w.reconcile();
    expect(w.status.phase).toBe('Failed');
    expect(w.claims).toEqual(new Set(['work']));
    expect(w.pdb).toBe(false);
  });

  it('deletes the claims when the workflow succeeded, or always with OnWorkflowCompletion, and again on later reconciles', () => {
    const ok = new World(spec({}));
    ok.reconcile();
    ok.succeedPod('wf');
    ok.reconcile();
    expect(ok.claims.size).toBe(0);
    ok.reconcile();
    expect(ok.lastActions).toContainEqual({ kind: 'deletePVC', claimTemplate: 'work', reason: 'spec.volumeClaimGC OnWorkflowSuccess' });
    const always = new World(spec({ volumeClaimGC: { strategy: 'OnWorkflowCompletion' } }));
    always.reconcile();
    always.failPod('wf');
    always.reconcile();
    expect(always.claims.size).toBe(0);
  });

  it('refuses a nameless claim template, an unknown strategy and a selector in the budget', () => {
    const bad = spec({
      volumeClaimTemplates: [{ spec: {} } as never],
      volumeClaimGC: { strategy: 'Never' },
      podDisruptionBudget: { minAvailable: 1, selector: {} } as never,
    });
    const msgs = validateWorkflow({ metadata: { name: 'wf' }, spec: bad }, {})
      .map((e) => e.message)
      .join('\n');
    expect(msgs).toMatch(/spec\.volumeClaimTemplates\[0\]\.metadata\.name is required/);
    expect(msgs).toMatch(/spec\.volumeClaimGC\.strategy must be one of OnWorkflowSuccess, OnWorkflowCompletion/);
    expect(msgs).toMatch(/spec\.podDisruptionBudget\.selector is set by plugflow/);
  });
});
