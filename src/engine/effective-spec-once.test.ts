/**
 * The effective spec (workflowTemplateRef merged) is computed once per reconcile: the engine
 * merges, validates the merged spec on the first reconcile, and hands it back to the controller
 * for the pods (ReconcileResult.spec) instead of each of them merging again.
 */
import { describe, expect, it, vi } from 'vitest';
import type { Workflow } from '../api/index.js';
import { templateSourceKey } from './contract.js';
import type * as EffectiveSpecModule from './effective-spec.js';
import { effectiveSpec } from './effective-spec.js';
import { reconcileWorkflow } from './reconcile.js';

vi.mock('./effective-spec.js', async (importOriginal) => {
  const real = await importOriginal<typeof EffectiveSpecModule>();
  return { ...real, effectiveSpec: vi.fn(real.effectiveSpec) };
});

const workflow: Workflow = {
  apiVersion: 'plugflow.io/v1alpha1',
  kind: 'Workflow',
  metadata: { name: 'wf', namespace: 'ns', uid: 'u' },
  spec: { workflowTemplateRef: { name: 'lib' }, nodeSelector: { disk: 'ssd' } },
};
const templates = {
  [templateSourceKey('WorkflowTemplate', 'lib')]: {
    templates: [{ name: 'main', container: { image: 'alpine' } }],
    spec: { entrypoint: 'main', serviceAccountName: 'runner', templates: [{ name: 'main', container: { image: 'alpine' } }] },
  },
};

describe('effectiveSpec once per reconcile', () => {
  it('merges once on the first reconcile (validation included) and returns the merged spec', () => {
    const merge = vi.mocked(effectiveSpec);
    merge.mockClear();
    const result = reconcileWorkflow(workflow, { pods: [], tasks: [], templates, now: '2024-01-01T00:00:00Z', pluginsEnabled: false });
    expect(merge).toHaveBeenCalledTimes(1);
    expect(result.status.phase).toBe('Running');
    expect(result.spec).toMatchObject({ entrypoint: 'main', serviceAccountName: 'runner', nodeSelector: { disk: 'ssd' } });
    expect(result.actions.map((a) => a.kind)).toContain('createPod');

    merge.mockClear();
    reconcileWorkflow(
      { ...workflow, status: result.status },
      { pods: [], tasks: [], templates, now: '2024-01-01T00:00:01Z', pluginsEnabled: false },
    );
    expect(merge).toHaveBeenCalledTimes(1);
  });
});
