import { describe, expect, it } from 'vitest';
import type { Workflow, WorkflowSpec } from '../api/index.js';
import type { SourceRef } from './effective-spec.js';
import { fetchTemplateSources, resolveTemplateSources, type SourceResolution } from './template-sources.js';

const wf = (spec: WorkflowSpec): Workflow => ({
  apiVersion: 'plugflow.io/v1alpha1',
  kind: 'Workflow',
  metadata: { name: 'w', namespace: 'ns' },
  spec,
});
const call = (name: string, cluster = false): WorkflowSpec['templates'] => [
  { name: 'main', steps: [[{ name: 's', templateRef: { name, template: 't', ...(cluster ? { clusterScope: true } : {}) } }]] },
];

/** Stored templates: a → b (cluster) → a (a cycle), c refers to a missing one. */
const store: Record<string, WorkflowSpec> = {
  'WorkflowTemplate/a': { templates: [{ name: 't', container: { image: 'x' } }, ...call('b', true)!.map((t) => ({ ...t, name: 'u' }))] },
  'ClusterWorkflowTemplate/b': { templates: [{ name: 't', container: { image: 'y' } }, ...call('a')!.map((t) => ({ ...t, name: 'u' }))] },
  'WorkflowTemplate/c': {
    entrypoint: 't',
    templates: [{ name: 't', container: { image: 'z' } }, ...call('gone')!.map((t) => ({ ...t, name: 'u' }))],
  },
};

/** Runs both drivers on the same store; they must agree; returns the result and the lookups made. */
async function both(spec: WorkflowSpec, maxSources?: number): Promise<{ result: SourceResolution; lookups: string[] }> {
  const lookups: string[] = [];
  const lookup = (ref: SourceRef) => {
    lookups.push(`${ref.kind}/${ref.name}`);
    return store[`${ref.kind}/${ref.name}`];
  };
  const options = maxSources === undefined ? {} : { maxSources };
  const sync = resolveTemplateSources(wf(spec), lookup, options);
  const syncLookups = lookups.splice(0);
  const async = await fetchTemplateSources(wf(spec), async (ref) => lookup(ref), options);
  expect(async).toEqual(sync);
  expect(lookups).toEqual(syncLookups);
  return { result: sync, lookups };
}

describe('template sources resolved once (sync over a cache, async over fetches)', () => {
  it('follows references transitively, looking each source up once even around a cycle', async () => {
    const { result, lookups } = await both({ entrypoint: 'main', templates: call('a') });
    expect(lookups).toEqual(['WorkflowTemplate/a', 'ClusterWorkflowTemplate/b']);
    expect(result.ok && Object.keys(result.sources)).toEqual(['WorkflowTemplate/a', 'ClusterWorkflowTemplate/b']);
  });

  it('follows spec.workflowTemplateRef and leaves a missing source out (asked once)', async () => {
    const { result, lookups } = await both({ workflowTemplateRef: { name: 'c' } });
    expect(lookups).toEqual(['WorkflowTemplate/c', 'WorkflowTemplate/gone']);
    expect(result).toEqual({
      ok: true,
      sources: {
        'WorkflowTemplate/c': { templates: store['WorkflowTemplate/c']!.templates, entrypoint: 't', spec: store['WorkflowTemplate/c'] },
      },
    });
  });

  it('stops with the limit message once it would look up more than maxSources', async () => {
    expect((await both({ entrypoint: 'main', templates: call('a') }, 2)).result.ok).toBe(true);
    const over = await both({ entrypoint: 'main', templates: call('a') }, 1);
    expect(over.result).toEqual({ ok: false, error: 'workflow refers to more than 1 templates' });
    expect(over.lookups).toEqual(['WorkflowTemplate/a']);
  });

  it('ends with the error of a lookup that throws', async () => {
    const refused = new Error('forbidden');
    expect(() =>
      resolveTemplateSources(wf({ templates: call('a') }), () => {
        throw refused;
      }),
    ).toThrow(refused);
    await expect(
      fetchTemplateSources(wf({ templates: call('a') }), async () => {
        throw refused;
      }),
    ).rejects.toBe(refused);
  });

  it('looks nothing up for a workflow without references', async () => {
    const { result, lookups } = await both({ entrypoint: 'main', templates: [{ name: 'main', container: { image: 'x' } }] });
    expect(result).toEqual({ ok: true, sources: {} });
    expect(lookups).toEqual([]);
  });
});
