import { describe, expect, it } from 'vitest';
import type { Workflow, WorkflowSpec } from '../api/index.js';
import type { SourceRef } from '../engine/index.js';
import { mayWaitForTemplates, TEMPLATE_LAG_LIMIT_MS, templatesBehind } from './template-lag.js';

const wf = (spec: WorkflowSpec): Workflow =>
  ({ apiVersion: 'plugflow.io/v1alpha1', kind: 'Workflow', metadata: { name: 'w', namespace: 'ns' }, spec }) as Workflow;
const key = (ref: SourceRef) => `${ref.kind} ${ref.name}`;
/** A lookup over `specs` that records what it was asked. */
const lookup = (specs: Record<string, WorkflowSpec>, asked: string[] = []) => ({
  asked,
  sync: (ref: SourceRef) => (asked.push(key(ref)), specs[key(ref)]),
  async: async (ref: SourceRef) => (asked.push(key(ref)), specs[key(ref)]),
});

const lib: WorkflowSpec = { templates: [{ name: 'echo', container: { image: 'busybox' } }] };
const usesLib: WorkflowSpec = {
  entrypoint: 'main',
  templates: [{ name: 'main', steps: [[{ name: 'a', templateRef: { name: 'lib', template: 'echo' } }]] }],
};

describe('templatesBehind', () => {
  it('asks the API server nothing when the caches hold every template the workflow refers to', async () => {
    const api = lookup({});
    const cache = lookup({ 'WorkflowTemplate lib': lib });
    expect(await templatesBehind(wf(usesLib), cache.sync, api.async)).toEqual([]);
    expect(api.asked).toEqual([]);
    expect(
      await templatesBehind(wf({ entrypoint: 'main', templates: [{ name: 'main', container: { image: 'x' } }] }), cache.sync, api.async),
    ).toEqual([]);
  });

  it('names a template the caches lack and the API server has', async () => {
    const api = lookup({ 'WorkflowTemplate lib': lib });
    expect(await templatesBehind(wf(usesLib), lookup({}).sync, api.async)).toEqual(['WorkflowTemplate lib']);
    expect(api.asked).toEqual(['WorkflowTemplate lib']);
  });

  it('follows what a fetched template refers to, and counts a template that exists nowhere as not lagging', async () => {
    // workflowTemplateRef → outer (lagging) → templateRef to cluster-scoped inner (lagging too) and to gone (nowhere)
    const outer: WorkflowSpec = {
      entrypoint: 'main',
      templates: [
        {
          name: 'main',
          dag: {
            tasks: [
              { name: 'a', templateRef: { name: 'inner', template: 'echo', clusterScope: true } },
              { name: 'b', templateRef: { name: 'gone', template: 'echo' } },
            ],
          },
        },
      ],
    };
    const api = lookup({ 'WorkflowTemplate outer': outer, 'ClusterWorkflowTemplate inner': lib });
    const behind = await templatesBehind(wf({ workflowTemplateRef: { name: 'outer' } }), lookup({}).sync, api.async);
    expect(behind).toEqual(['WorkflowTemplate outer', 'ClusterWorkflowTemplate inner']);
    expect(api.asked.sort()).toEqual(['ClusterWorkflowTemplate inner', 'WorkflowTemplate gone', 'WorkflowTemplate outer']);
    expect(await templatesBehind(wf({ workflowTemplateRef: { name: 'gone' } }), lookup({}).sync, lookup({}).async)).toEqual([]);
  });

  it('passes on an error of the API server (the reconcile is retried)', async () => {
    const failing = async () => {
      throw new Error('503 ServiceUnavailable');
    };
    await expect(templatesBehind(wf(usesLib), lookup({}).sync, failing)).rejects.toThrow('503 ServiceUnavailable');
  });
});

describe('mayWaitForTemplates', () => {
  const created = '2026-01-01T00:00:00Z';
  const t0 = Date.parse(created);
  it('lets a workflow wait only within the limit after its creation', () => {
    expect(mayWaitForTemplates(created, t0 + 1000)).toBe(true);
    expect(mayWaitForTemplates(created, t0 + TEMPLATE_LAG_LIMIT_MS)).toBe(false);
    expect(mayWaitForTemplates(undefined, t0)).toBe(false);
    expect(mayWaitForTemplates('not a time', t0)).toBe(false);
  });
});
