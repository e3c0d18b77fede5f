/**
 * Pod-level resources (`podResources`) and Dynamic Resource Allocation claims (`resourceClaims`)
 * in the step pod: the template's replace the workflow's as a whole, and a podSpecPatch still
 * merges over them (claims by name).
 */
import { describe, expect, it } from 'vitest';
import type { Template, Workflow } from '../api/index.js';
import { buildStepPod } from './build-pod.js';

const say: Partial<Template> = { container: { image: 'alpine:3', command: ['true'], resources: { claims: [{ name: 'gpu' }] } } };

function pod(template: Partial<Template>, spec: Partial<Workflow['spec']> = {}) {
  return buildStepPod({
    workflow: { metadata: { name: 'wf', namespace: 'ns', uid: 'u' }, spec: { templates: [], ...spec } },
    nodeId: 'wf-1',
    podName: 'wf-t-1',
    template: { name: 't', ...say, ...template },
    executorImage: 'plugflow:dev',
    ...(spec.podSpecPatch ? { workflowPodSpecPatch: spec.podSpecPatch } : {}),
  });
}

const wfResources = { requests: { cpu: '100m', memory: '64Mi' }, limits: { cpu: '1', memory: '512Mi' } };
const wfClaims = [{ name: 'gpu', resourceClaimTemplateName: 'small' }];

describe('pod-level resources', () => {
  it('are the workflow’s spec.podResources unless the template sets its own, which replaces them whole', () => {
    expect(pod({}, { podResources: wfResources }).spec!.resources).toEqual(wfResources);
    expect(pod({ podResources: { limits: { cpu: '2' } } }, { podResources: wfResources }).spec!.resources).toEqual({
      limits: { cpu: '2' },
    });
    expect(pod({}).spec!.resources).toBeUndefined();
    expect(JSON.stringify(pod({}).spec)).not.toContain('"resources":{}');
  });

  it('leave the containers’ own resources alone, plugflow’s init and wait containers having none', () => {
    const spec = pod({ podResources: wfResources }).spec!;
    expect(spec.containers[0]!.resources).toEqual({ claims: [{ name: 'gpu' }] });
    for (const c of [...spec.initContainers!, ...spec.containers.slice(1)]) expect(c.resources).toBeUndefined();
  });

  it('are copies: the pod never shares an object with the workflow', () => {
    const spec = { podResources: structuredClone(wfResources) };
    const built = pod({}, spec).spec!;
    built.resources!.limits!.cpu = '9';
    expect(spec.podResources.limits.cpu).toBe('1');
  });
});

describe('resource claims', () => {
  it('are the workflow’s spec.resourceClaims unless the template lists its own, which replace them whole', () => {
    expect(pod({}, { resourceClaims: wfClaims }).spec!.resourceClaims).toEqual(wfClaims);
    const own = [
      { name: 'gpu', resourceClaimTemplateName: 'large' },
      { name: 'shared', resourceClaimName: 'pool' },
    ];
    expect(pod({ resourceClaims: own }, { resourceClaims: wfClaims }).spec!.resourceClaims).toEqual(own);
    // An empty template list is no list, as in the peer: the workflow's apply.
    expect(pod({ resourceClaims: [] }, { resourceClaims: wfClaims }).spec!.resourceClaims).toEqual(wfClaims);
    expect(pod({}, { resourceClaims: [] }).spec!.resourceClaims).toBeUndefined();
  });

  it('a podSpecPatch merges over them by claim name', () => {
    const spec = pod(
      { podSpecPatch: JSON.stringify({ resourceClaims: [{ name: 'gpu', resourceClaimTemplateName: null, resourceClaimName: 'mine' }] }) },
      { resourceClaims: [...wfClaims, { name: 'other', resourceClaimName: 'x' }] },
    ).spec!;
    expect(spec.resourceClaims).toEqual([
      { name: 'gpu', resourceClaimName: 'mine' },
      { name: 'other', resourceClaimName: 'x' },
    ]);
  });
});
