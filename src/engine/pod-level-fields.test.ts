/**
 * podResources and resourceClaims at both levels: what the validator refuses before the run
 * (what the API server would refuse on the pod), templates that run no pod included, and what
 * reaches the createPod action (the template's rendered with its inputs).
 */
import { describe, expect, it } from 'vitest';
import type { Template, WorkflowSpec } from '../api/index.js';
import { World } from './test-world.js';
import { validateWorkflow } from './validate.js';

const say: Template = { name: 'say', container: { image: 'alpine', command: ['true'] } };

const problems = (spec: Partial<WorkflowSpec>, templates: Template[] = [say]) =>
  validateWorkflow({ metadata: { name: 'w', namespace: 'ns' }, spec: { entrypoint: templates[0]!.name, templates, ...spec } }).map(
    (e) => `${e.field} ${e.detail}`,
  );

describe('podResources and resourceClaims', () => {
  it("accept the peer's examples at both levels", () => {
    const limits = { cpu: '1', memory: '512Mi' };
    expect(problems({ podResources: { requests: { cpu: '100m', memory: '64Mi' }, limits } })).toEqual([]);
    expect(problems({ podResources: { limits } }, [{ ...say, podResources: { limits: { cpu: '2', 'hugepages-2Mi': '4Mi' } } }])).toEqual(
      [],
    );
    const claims = [{ name: 'accelerator', resourceClaimTemplateName: 'example-device-claim-template' }];
    expect(problems({ resourceClaims: claims }, [{ ...say, resourceClaims: [{ name: 'x', resourceClaimName: 'shared' }] }])).toEqual([]);
  });

  it('refuse what Kubernetes refuses at pod level, naming the field', () => {
    expect(
      problems({ podResources: { limits: { 'nvidia.com/gpu': '1' }, claims: [{ name: 'x' }] } }, [
        { ...say, podResources: { requests: { 'ephemeral-storage': '1Gi' } } },
      ]),
    ).toEqual([
      'spec.templates[say].podResources.requests.ephemeral-storage is not a pod-level resource: Kubernetes takes only cpu, memory and hugepages-* there',
      "spec.podResources.claims is not allowed at pod level: list the pod's claims in resourceClaims and name them in a container's resources.claims",
      'spec.podResources.limits.nvidia.com/gpu is not a pod-level resource: Kubernetes takes only cpu, memory and hugepages-* there',
    ]);
    expect(
      problems({
        resourceClaims: [
          { name: 'a' },
          { name: 'b', resourceClaimName: 'x', resourceClaimTemplateName: 'y' },
          { name: 'b', resourceClaimName: 'z' },
          { resourceClaimName: 'n' } as never,
        ],
      }),
    ).toEqual([
      'spec.resourceClaims[a] needs one of resourceClaimName (an existing ResourceClaim) and resourceClaimTemplateName (a ResourceClaimTemplate)',
      'spec.resourceClaims[b] has both resourceClaimName and resourceClaimTemplateName; keep one',
      'spec.resourceClaims[b] is given twice',
      'spec.resourceClaims[3].name is required: containers name the claim in resources.claims',
    ]);
  });

  it('are refused on a template that runs no pod; templateDefaults gives them only to pod templates', () => {
    const main: Template = { name: 'main', steps: [[{ name: 'a', template: 'say' }]] };
    expect(
      problems({}, [{ ...main, podResources: { limits: { cpu: '1' } }, resourceClaims: [{ name: 'x', resourceClaimName: 'y' }] }, say]),
    ).toEqual([
      'spec.templates[main].podResources shapes the step pod, and a steps template runs none (only container, script, containerSet, data templates do)',
      'spec.templates[main].resourceClaims shapes the step pod, and a steps template runs none (only container, script, containerSet, data templates do)',
    ]);
    expect(problems({ templateDefaults: { podResources: { limits: { cpu: '1' } } } }, [main, say])).toEqual([]);
  });

  it("reach the createPod action, the template's rendered with its inputs", () => {
    const w = new World({
      entrypoint: 'main',
      podResources: { limits: { cpu: '1' } },
      resourceClaims: [{ name: 'gpu', resourceClaimTemplateName: 'small' }],
      templates: [
        {
          name: 'main',
          steps: [
            [{ name: 'big', template: 'sized', arguments: { parameters: [{ name: 'cpu', value: '2' }] } }],
            [{ name: 'plain', template: 'say' }],
          ],
        },
        {
          name: 'sized',
          inputs: { parameters: [{ name: 'cpu' }] },
          podResources: { limits: { cpu: '{{inputs.parameters.cpu}}' } },
          resourceClaims: [{ name: 'gpu', resourceClaimTemplateName: 'large-{{inputs.parameters.cpu}}' }],
          container: { image: 'alpine', command: ['true'] },
        },
        say,
      ],
    });
    w.reconcile();
    const created = w.lastActions.find((a) => a.kind === 'createPod');
    expect(created?.kind === 'createPod' && created.template).toMatchObject({
      podResources: { limits: { cpu: '2' } },
      resourceClaims: [{ name: 'gpu', resourceClaimTemplateName: 'large-2' }],
    });
  });
});
