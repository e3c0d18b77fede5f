/**
 * podSpecPatch rendering, engine to pod (issue 18 §4, issue 10 item 2): both the workflow's and
 * the template's patch are rendered with the pod's variables, in string leaves only, so a
 * parameter can set a value but never add a field.
 */
import { describe, expect, it } from 'vitest';
import type { EngineAction } from './contract.js';
import type { WorkflowSpec } from '../api/index.js';
import { buildStepPod } from '../pods/build-pod.js';
import { World } from './test-world.js';

function podOf(spec: WorkflowSpec) {
  const w = new World(spec);
  const result = w.reconcile();
  const create = result.actions.find((a): a is Extract<EngineAction, { kind: 'createPod' }> => a.kind === 'createPod');
  if (!create) throw new Error(`no pod: ${w.status.message}`);
  const workflow = {
    apiVersion: 'plugflow.io/v1alpha1',
    kind: 'Workflow' as const,
    metadata: { name: 'wf', namespace: 'ns', uid: 'u' },
    spec,
  };
  return buildStepPod({
    workflow,
    nodeId: create.nodeId,
    podName: create.podName,
    template: create.template,
    workflowPodSpecPatch: create.workflowPodSpecPatch,
    executorImage: 'x',
  });
}

const main = (podSpecPatch?: string) => ({
  name: 'main',
  inputs: { parameters: [{ name: 'cpu' }] },
  container: { image: 'alpine', command: ['true'] },
  ...(podSpecPatch ? { podSpecPatch } : {}),
});

const limits = (pod: ReturnType<typeof podOf>) => pod.spec!.containers.find((c) => c.name === 'main')!.resources?.limits;

describe('podSpecPatch rendering', () => {
  it('renders the workflow-level patch (it reached the API server with its tags before)', () => {
    const pod = podOf({
      entrypoint: 'main',
      arguments: {
        parameters: [
          { name: 'mem', value: '300Mi' },
          { name: 'cpu', value: '2' },
        ],
      },
      podSpecPatch: 'containers:\n  - name: main\n    resources:\n      limits:\n        memory: "{{workflow.parameters.mem}}"\n',
      templates: [
        {
          ...main('{"containers": [{"name": "main", "resources": {"limits": {"cpu": "{{inputs.parameters.cpu}}"}}}]}'),
          inputs: { parameters: [{ name: 'cpu', value: '{{workflow.parameters.cpu}}' }] },
        },
      ],
    });
    expect(limits(pod)).toEqual({ memory: '300Mi', cpu: '2' });
    expect(JSON.stringify(pod)).not.toContain('{{');
  });

  it('a workflow-level tag that cannot be resolved errors the node naming spec.podSpecPatch', () => {
    const w = new World({
      entrypoint: 'main',
      arguments: { parameters: [{ name: 'cpu', value: '1' }] },
      podSpecPatch: '{"priority": "{{workflow.parameters.nope}}"}',
      templates: [main()],
    });
    w.reconcile();
    expect(w.node('wf')).toMatchObject({ phase: 'Error', message: expect.stringContaining('spec.podSpecPatch.priority') });
  });

  const injections = [
    '1"}}]}, "hostPID": true, "volumes": [{"name": "h", "hostPath": {"path": "/"}}], "x": [{"y": {"z": "',
    '1\nhostPID: true\nvolumes:\n  - name: h\n    hostPath: {path: /}\n',
    "1'}}]}, hostPID: true, x: [{y: {z: '",
  ];
  for (const [level, i] of [
    ['template', 0],
    ['template', 1],
    ['template', 2],
    ['workflow', 0],
    ['workflow', 1],
  ] as const) {
    it(`a parameter cannot rewrite the ${level} patch (injection ${i})`, () => {
      const patch = '{"containers": [{"name": "main", "resources": {"limits": {"cpu": "{{workflow.parameters.cpu}}"}}}]}';
      const pod = podOf({
        entrypoint: 'main',
        arguments: { parameters: [{ name: 'cpu', value: injections[i]! }] },
        ...(level === 'workflow' ? { podSpecPatch: patch } : {}),
        templates: [main(level === 'template' ? patch : undefined)],
      });
      expect(pod.spec!.hostPID).toBeUndefined();
      expect(pod.spec!.volumes!.some((v) => v.hostPath)).toBe(false);
      expect(limits(pod)).toEqual({ cpu: injections[i] });
    });
  }

  it('inserts the JSON value of a tag standing where a value goes, from a previous task (peer: pod-spec-from-previous-step)', () => {
    const w = new World({
      entrypoint: 'flow',
      templates: [
        {
          name: 'flow',
          dag: {
            tasks: [
              { name: 'parse', template: 'parse' },
              {
                name: 'setup',
                depends: 'parse',
                template: 'setup',
                arguments: { parameters: [{ name: 'r', value: '{{tasks.parse.outputs.parameters.r}}' }] },
              },
            ],
          },
        },
        { name: 'parse', container: { image: 'alpine' }, outputs: { parameters: [{ name: 'r', valueFrom: { path: '/tmp/r' } }] } },
        {
          name: 'setup',
          inputs: { parameters: [{ name: 'r' }] },
          podSpecPatch:
            '{"containers":[{"name":"main", "resources":{"limits": {{inputs.parameters.r}}, "requests": {{inputs.parameters.r}} }}],' +
            ' "hostname": "h-{{inputs.parameters.r}}"}',
          container: { image: 'alpine', command: ['true'] },
        },
      ],
    });
    w.reconcile();
    w.succeedPod('parse', { parameters: [{ name: 'r', value: '{"memory": "10Gi", "cpu": "2000m"}' }] });
    w.reconcile();
    const patch = JSON.parse(w.created.get(w.pod('setup').podName)!.template.podSpecPatch!);
    expect(patch.containers[0].resources).toEqual({
      limits: { memory: '10Gi', cpu: '2000m' },
      requests: { memory: '10Gi', cpu: '2000m' },
    });
    // Inside a string the value stays that string.
    expect(patch.hostname).toBe('h-{"memory": "10Gi", "cpu": "2000m"}');
  });

  it('refuses a value-position tag whose value is more than one JSON value, naming the field and the parameter', () => {
    for (const hostile of ['1, "hostPID": true', '{"cpu": "1"}, "hostPID": true', '1}}]}, "hostPID": true, "x": [{"y": {"z": 1']) {
      const w = new World({
        entrypoint: 'main',
        arguments: { parameters: [{ name: 'cpu', value: hostile }] },
        templates: [main('{"containers": [{"name": "main", "resources": {"limits": {"cpu": {{workflow.parameters.cpu}}}}}]}')],
      });
      w.reconcile();
      expect(w.node('wf')).toMatchObject({
        phase: 'Error',
        message: expect.stringContaining(
          'podSpecPatch.containers[0].resources.limits.cpu: {{workflow.parameters.cpu}} stands where a JSON value goes, but its value',
        ),
      });
      expect(w.created.size).toBe(0);
    }
  });
});
