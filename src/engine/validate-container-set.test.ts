import { describe, expect, it } from 'vitest';
import type { Template } from '../api/index.js';
import { validateWorkflow } from './validate.js';

const problems = (t: Omit<Template, 'name'>): string[] =>
  validateWorkflow({
    apiVersion: 'plugflow.io/v1alpha1',
    kind: 'Workflow',
    metadata: { name: 'w' },
    spec: { entrypoint: 's', templates: [{ name: 's', ...t }] },
  } as never).map((e) => `${e.field} ${e.detail}`);

const c = (name: string, dependencies?: string[]) => ({
  name,
  image: 'alpine',
  command: ['true'],
  ...(dependencies ? { dependencies } : {}),
});

describe('containerSet validation', () => {
  it('accepts the peer documentation example', () => {
    expect(
      problems({
        volumes: [{ name: 'workspace', emptyDir: {} }],
        containerSet: {
          volumeMounts: [{ mountPath: '/workspace', name: 'workspace' }],
          containers: [c('a'), c('b'), c('main', ['a', 'b'])],
          retryStrategy: { retries: '10', duration: '30s' },
        },
        outputs: { parameters: [{ name: 'message', valueFrom: { path: '/workspace/message' } }] },
      }),
    ).toEqual([]);
  });

  it('refuses unknown and circular dependencies, reserved and repeated names, naming the field', () => {
    expect(problems({ containerSet: { containers: [c('a', ['b']), c('b', ['a'])] } })).toEqual([
      'spec.templates[s].containerSet.containers have a dependency cycle: a -> b -> a',
    ]);
    expect(problems({ containerSet: { containers: [c('a', ['nope', 'a'])] } })).toEqual([
      'spec.templates[s].containerSet.containers[0].dependencies[0] names no container of the set: "nope"',
      'spec.templates[s].containerSet.containers[0].dependencies[1] a container cannot depend on itself',
    ]);
    expect(problems({ containerSet: { containers: [c('wait'), c('x'), c('x')] } })).toEqual([
      'spec.templates[s].containerSet.containers[0].name "wait" is reserved by plugflow for its own container in the pod',
      'spec.templates[s].containerSet.containers[2].name "x" is used twice',
    ]);
    // Without command a member runs its image's entrypoint (looked up when the pod is built).
    expect(problems({ containerSet: { containers: [{ name: 'a', image: 'alpine' }] } })).toEqual([]);
    expect(problems({ containerSet: { containers: [{ name: 'a' }] } })).toEqual([
      'spec.templates[s].containerSet.containers[0].image is required',
    ]);
    expect(problems({ containerSet: { containers: [c('a')], retryStrategy: { retries: -1, duration: 'soon' } } })).toEqual([
      'spec.templates[s].containerSet.retryStrategy.retries must be a whole number of at least 0, got -1',
      expect.stringMatching(/^spec\.templates\[s\]\.containerSet\.retryStrategy\.duration "soon"/),
    ]);
  });

  it('needs a container named main for outputs and input artifacts', () => {
    expect(
      problems({
        containerSet: { containers: [c('a')] },
        outputs: { parameters: [{ name: 'p', valueFrom: { path: '/tmp/p' } }] },
      }),
    ).toEqual([
      'spec.templates[s].outputs.parameters[0].valueFrom.path needs a container named main in the containerSet: only main reads inputs and writes outputs (as in the peer)',
    ]);
  });
});

describe('data template validation', () => {
  it('needs a source and expressions that parse', () => {
    expect(problems({ data: { source: {}, transformation: [{ expression: 'filter(data, {# endsWith "x"})' }] } })).toEqual([
      'spec.templates[s].data.source.artifactPaths is required: it is what the data template lists',
    ]);
    expect(
      problems({
        data: { source: { artifactPaths: { name: 'a', vendorAObject: { key: 'k' } } }, transformation: [{ expression: 'data +' }] },
      }),
    ).toEqual([expect.stringMatching(/^spec\.templates\[s\]\.data\.transformation\[0\]\.expression /)]);
    expect(
      problems({ data: { source: { artifactPaths: { name: 'a', http: { url: 'http://x' } } }, transformation: [] } } as never),
    ).toEqual([
      'spec.templates[s].data.source.artifactPaths.http is not supported yet: a data template lists the objects of an object store (vendorAObject, vendorB, vendorCObject)',
    ]);
  });
});
