import { describe, expect, it } from 'vitest';
import type { Template, WorkflowSpec } from '../api/index.js';
import { podNameFor } from './node-naming.js';
import { validateWorkflow } from './validate.js';
import { World } from './test-world.js';

const makeJob: Template = {
  name: 'make-job',
  inputs: { parameters: [{ name: 'size', default: '3' }] },
  serviceAccountName: 'job-maker',
  resource: {
    action: 'create',
    successCondition: 'status.succeeded > 2',
    failureCondition: 'status.failed > 0',
    manifest: 'apiVersion: batch/v1\nkind: Job\nmetadata:\n  generateName: j-\nspec:\n  completions: {{inputs.parameters.size}}\n',
  },
  outputs: { parameters: [{ name: 'job-name', valueFrom: { jsonPath: '{.metadata.name}' } }] },
};

const [mainT, , echoT] = [0, 1, 2].map((i) => flow().templates![i]!) as [Template, Template, Template];

function withJob(job: Template, extra: Partial<WorkflowSpec> = {}): WorkflowSpec {
  return { ...flow(extra), templates: [mainT, job, echoT] };
}

function flow(extra: Partial<WorkflowSpec> = {}): WorkflowSpec {
  return {
    entrypoint: 'main',
    templates: [
      {
        name: 'main',
        steps: [
          [{ name: 'job', template: 'make-job' }],
          [
            {
              name: 'after',
              template: 'echo',
              arguments: { parameters: [{ name: 'v', value: '{{steps.job.outputs.parameters.job-name}} {{steps.job.outputs.result}}' }] },
            },
          ],
        ],
      },
      makeJob,
      {
        name: 'echo',
        inputs: { parameters: [{ name: 'v' }] },
        container: { image: 'alpine', command: ['echo', '{{inputs.parameters.v}}'] },
      },
    ],
    ...extra,
  };
}

describe('resource nodes', () => {
  it('asks the runner with the rendered template and the step service account, then passes its outputs on', () => {
    const w = new World(flow());
    w.reconcile();
    const node = w.node('job');
    expect(node).toMatchObject({ type: 'Resource', phase: 'Pending' });
    expect(w.resourceAsked).toHaveLength(1);
    expect(w.resourceAsked[0]).toMatchObject({ kind: 'runResource', nodeId: node.id, serviceAccountName: 'job-maker' });
    expect(w.resourceAsked[0]!.template.resource!.manifest).toContain('completions: 3');
    expect(w.resourceAsked[0]!.resume).toBeUndefined();

    const object = { apiVersion: 'batch/v1', kind: 'Job', namespace: 'ns', name: 'j-abcde' };
    w.reportResource('job', { phase: 'Running', message: 'create: job.batch/j-abcde', object });
    w.reconcile();
    expect(w.node('job')).toMatchObject({ phase: 'Running', message: 'create: job.batch/j-abcde', resourceObject: object });
    // Asked again while it runs, now to resume from the object (a restarted controller waits, it does not create again).
    expect(w.resourceAsked[0]).toMatchObject({ nodeId: node.id, resume: object });

    w.reportResource('job', {
      phase: 'Succeeded',
      outputs: { result: 'job.batch/j-abcde', parameters: [{ name: 'job-name', value: 'j-abcde' }] },
      object,
    });
    w.reconcile();
    expect(w.node('job')).toMatchObject({
      phase: 'Succeeded',
      outputs: { result: 'job.batch/j-abcde', parameters: [{ name: 'job-name', value: 'j-abcde' }] },
    });
    expect(w.resourceAsked).toEqual([]);
    const after = [...w.created.values()].find((c) => c.template.name === 'echo');
    expect(after?.template.container?.command).toEqual(['echo', 'j-abcde job.batch/j-abcde']);
  });

  it('resumes from the stored object when the runner has nothing to report (controller restarted)', () => {
    const w = new World(flow());
    w.reconcile();
    const object = { apiVersion: 'batch/v1', kind: 'Job', namespace: 'ns', name: 'j-1' };
    w.reportResource('job', { phase: 'Running', object });
    w.reconcile();
    w.resourceResults.clear();
    w.reconcile();
    expect(w.resourceAsked).toHaveLength(1);
    expect(w.resourceAsked[0]!.resume).toEqual(object);
    expect(w.node('job').phase).toBe('Running');
  });

  it('uses spec.serviceAccountName, else default', () => {
    const plain = { ...makeJob, serviceAccountName: undefined };
    const a = new World(withJob(plain, { serviceAccountName: 'wf-sa' }));
    a.reconcile();
    expect(a.resourceAsked[0]!.serviceAccountName).toBe('wf-sa');
    const b = new World(withJob(plain));
    b.reconcile();
    expect(b.resourceAsked[0]!.serviceAccountName).toBe('default');
  });

  it('ends the node with the phase and message the runner reports', () => {
    const w = new World(flow());
    w.reconcile();
    w.reportResource('job', { phase: 'Failed', message: 'failure condition "status.failed > 0" holds for job.batch/j-1' });
    w.reconcile();
    expect(w.node('job')).toMatchObject({ phase: 'Failed', message: 'failure condition "status.failed > 0" holds for job.batch/j-1' });
    expect(w.status.phase).toBe('Failed');
    expect(w.resourceAsked).toEqual([]);
  });

  it('fails the node at its deadline and stops asking for it', () => {
    const w = new World(withJob({ ...makeJob, activeDeadlineSeconds: 10 }));
    w.reconcile();
    w.reportResource('job', { phase: 'Running' });
    w.advance(11);
    w.reconcile();
    expect(w.node('job').phase).toBe('Failed');
    expect(w.node('job').message).toMatch(/deadline/i);
    expect(w.resourceAsked).toEqual([]);
  });

  it("gives pod.name the name the node's pod would have, in the manifest, the flags and input defaults, per attempt", () => {
    const patch: Template = {
      name: 'patch-self',
      inputs: { parameters: [{ name: 'who', default: 'pod {{pod.name}}' }] },
      resource: {
        action: 'patch',
        mergeStrategy: 'merge',
        flags: ['pod', '{{pod.name}}'],
        manifest: 'metadata:\n  annotations:\n    who: "{{inputs.parameters.who}}"\n    me: "{{pod.name}}"\n',
      },
    };
    const w = new World(withJob({ ...patch, name: 'make-job' }));
    w.reconcile();
    const node = w.node('job');
    const podName = podNameFor('wf', node.name, 'make-job');
    const asked = w.resourceAsked[0]!.template.resource!;
    expect(asked.flags).toEqual(['pod', podName]);
    expect(asked.manifest).toContain(`who: "pod ${podName}"`);
    expect(asked.manifest).toContain(`me: "${podName}"`);
    // No pod is recorded on the node: none runs.
    expect(node.podName).toBeUndefined();

    const retried = new World(withJob({ ...patch, name: 'make-job', retryStrategy: { limit: 1 } }));
    retried.reconcile();
    expect(retried.resourceAsked[0]!.template.resource!.flags).toEqual(['pod', podNameFor('wf', 'wf[0].job(0)', 'make-job')]);
  });

  it('retries a failed resource node under retryStrategy', () => {
    const w = new World(withJob({ ...makeJob, retryStrategy: { limit: 1 } }));
    w.reconcile();
    expect(w.node('job').type).toBe('Retry');
    const first = w.resourceAsked[0]!.nodeId;
    w.resourceResults.set(first, { nodeId: first, phase: 'Failed', message: 'forbidden' });
    w.reconcile();
    w.reconcile();
    expect(w.resourceAsked).toHaveLength(1);
    expect(w.resourceAsked[0]!.nodeId).not.toBe(first);
  });
});

describe('resource template validation', () => {
  const wf = (resource: Template['resource'], outputs?: Template['outputs']) => ({
    apiVersion: 'plugflow.io/v1alpha1',
    kind: 'Workflow',
    metadata: { name: 'w' },
    spec: { entrypoint: 'r', templates: [{ name: 'r', resource, ...(outputs ? { outputs } : {}) }] },
  });
  const problems = (resource: Template['resource'], outputs?: Template['outputs']) => {
    return validateWorkflow(wf(resource, outputs) as never).map((e) => `${e.field} ${e.detail}`);
  };

  it('accepts the peer examples', () => {
    expect(
      problems({
        action: 'create',
        manifest: 'kind: Job',
        successCondition: 'status.succeeded > 9',
        failureCondition: 'status.failed > 0',
      }),
    ).toEqual([]);
    expect(
      problems({
        action: 'get',
        manifest: 'kind: Workflow',
        successCondition: 'status.phase == Succeeded',
        failureCondition: 'status.phase in (Failed, Error)',
      }),
    ).toEqual([]);
    expect(problems({ action: 'patch', mergeStrategy: 'json', flags: ['pod', '{{pod.name}}'], manifest: '- op: add' })).toEqual([]);
    expect(problems({ action: 'delete', flags: ['configmap', '--selector', 'cleanup=true'] })).toEqual([]);
  });

  it('refuses what cannot run, naming the field', () => {
    expect(problems({ action: 'create' })).toContainEqual(
      expect.stringMatching(/^spec\.templates\[r\]\.resource\.manifest is required for action create/),
    );
    expect(problems({ action: 'create', manifest: 'kind: X', mergeStrategy: 'merge' })).toContainEqual(
      'spec.templates[r].resource.mergeStrategy is for action patch, not create',
    );
    expect(problems({ action: 'delete', manifest: 'kind: X', successCondition: 'a' })).toContainEqual(
      'spec.templates[r].resource.successCondition means nothing for action delete: the object is gone',
    );
    expect(problems({ action: 'get', manifest: 'kind: X', successCondition: 'status.phase >> 2' })).toContainEqual(
      expect.stringMatching(/^spec\.templates\[r\]\.resource\.successCondition "status\.phase >> 2"/),
    );
    expect(problems({ action: 'delete', flags: ['pods', '--now'] })).toContainEqual(
      expect.stringMatching(/^spec\.templates\[r\]\.resource\.flags\[1\] "--now": not a flag plugflow can honour/),
    );
    expect(
      problems({ action: 'get', manifest: 'kind: X' }, { parameters: [{ name: 'p', valueFrom: { jsonPath: '{.a[?(x)]}' } }] }),
    ).toContainEqual(expect.stringMatching(/^spec\.templates\[r\]\.outputs\.parameters\[0\]\.valueFrom\.jsonPath /));
  });

  it('refuses jsonPath and jqFilter outputs outside resource templates', () => {
    const errors = validateWorkflow({
      apiVersion: 'plugflow.io/v1alpha1',
      kind: 'Workflow',
      metadata: { name: 'w' },
      spec: {
        entrypoint: 'c',
        templates: [
          { name: 'c', container: { image: 'a', command: ['x'] }, outputs: { parameters: [{ name: 'p', valueFrom: { jqFilter: '.' } }] } },
        ],
      },
    } as never);
    expect(errors.map((e) => `${e.field} ${e.detail}`)).toContainEqual(
      'spec.templates[c].outputs.parameters[0].valueFrom.jqFilter reads the object of a resource template; this template has none',
    );
  });
});
