import { describe, expect, it } from 'vitest';
import type { Template, WorkflowSpec } from '../api/index.js';
import { validateWorkflow } from './validate.js';
import { World } from './test-world.js';

const apply: Template = {
  name: 'apply',
  serviceAccountName: 'deployer',
  inputs: {
    artifacts: [{ name: 'manifest', path: '/tmp/manifest.yaml' }],
  },
  resource: { action: 'create', manifestFrom: { artifact: { name: 'manifest' } } },
};

function flow(template: Template = apply): WorkflowSpec {
  return {
    entrypoint: 'main',
    templates: [
      {
        name: 'main',
        steps: [
          [
            {
              name: 'deploy',
              template: 'apply',
              arguments: { artifacts: [{ name: 'manifest', raw: { data: 'kind: ConfigMap\napiVersion: v1\nmetadata: {name: m}\n' } }] },
            },
          ],
        ],
      },
      template,
    ],
  };
}

describe('resource nodes with manifestFrom.artifact', () => {
  it("first runs a pod of the step's own that fetches only the named artifact; the runner is not asked yet", () => {
    const w = new World(flow());
    w.reconcile();
    const node = w.node('deploy');
    expect(node).toMatchObject({ type: 'Resource', phase: 'Pending' });
    expect(w.resourceAsked).toEqual([]);
    expect([...w.created.keys()]).toEqual([node.podName]);
    const pod = w.created.get(node.podName!);
    expect(pod?.nodeId).toBe(node.id);
    expect(pod!.template).toEqual({
      name: 'apply',
      serviceAccountName: 'deployer',
      inputs: { artifacts: [expect.objectContaining({ name: 'manifest', path: '/tmp/manifest.yaml', raw: expect.anything() })] },
      archiveLocation: { archiveLogs: false },
      resource: apply.resource,
    });
    w.startPod('deploy');
    w.reconcile();
    expect(w.node('deploy').phase).toBe('Running');
    expect(w.resourceAsked).toEqual([]);
  });

  it('hands the printed manifest to the runner: whole from the report, or its beginning and size when the report shortened it', () => {
    const w = new World(flow());
    w.reconcile();
    w.succeedPod('deploy', { result: 'kind: ConfigMap' });
    w.reconcile();
    const podName = w.node('deploy').podName!;
    expect(w.resourceAsked).toHaveLength(1);
    expect(w.resourceAsked[0]).toMatchObject({
      serviceAccountName: 'deployer',
      manifest: { podName, text: 'kind: ConfigMap', bytes: 15, whole: true },
    });

    const long = new World(flow());
    long.reconcile();
    long.succeedPod('deploy', { result: 'kind: Con' });
    Object.assign(long.pod('deploy'), { resultTruncatedFrom: 20_000 });
    long.reconcile();
    expect(long.resourceAsked[0]!.manifest).toEqual({
      podName: long.node('deploy').podName,
      text: 'kind: Con',
      bytes: 20_000,
      whole: false,
    });
  });

  it('once the runner acted, the object is waited on without the pod (a restarted controller does not need it)', () => {
    const w = new World(flow());
    w.reconcile();
    w.succeedPod('deploy', { result: 'kind: ConfigMap' });
    w.reconcile();
    const object = { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'ns', name: 'm' };
    w.reportResource('deploy', { phase: 'Running', object });
    w.reconcile();
    w.removePod('deploy');
    w.resourceResults.clear();
    w.reconcile();
    expect(w.node('deploy')).toMatchObject({ phase: 'Running', resourceObject: object });
    expect(w.resourceAsked[0]).toMatchObject({ resume: object });
    expect(w.resourceAsked[0]!.manifest).toBeUndefined();
  });

  it('fails with the pod when it cannot fetch the manifest, and errs when the pod vanishes before the manifest was read', () => {
    const w = new World(flow());
    w.reconcile();
    w.failPod('deploy', 'init container init: Error (exit code 1): artifact "manifest": connection refused');
    w.reconcile();
    expect(w.node('deploy')).toMatchObject({
      phase: 'Failed',
      message: 'fetching the manifest: init container init: Error (exit code 1): artifact "manifest": connection refused',
    });
    expect(w.resourceAsked).toEqual([]);

    const gone = new World(flow());
    gone.reconcile();
    gone.startPod('deploy');
    gone.reconcile();
    gone.removePod('deploy');
    gone.reconcile();
    expect(gone.node('deploy')).toMatchObject({ phase: 'Error', message: expect.stringMatching(/deleted before the manifest was read/) });
  });

  it('is refused at submit, naming the field, when it names no input artifact, one without a path, or comes with a manifest', () => {
    const problems = (t: Template) => validateWorkflow({ spec: flow(t) } as never).map((p) => `${p.field}: ${p.detail}`);
    expect(problems({ ...apply, resource: { action: 'create', manifestFrom: { artifact: { name: 'other' } } } })).toContainEqual(
      expect.stringMatching(/^spec\.templates\[apply\]\.resource\.manifestFrom\.artifact\.name: names no input artifact .*manifest/),
    );
    expect(problems({ ...apply, inputs: { artifacts: [{ name: 'manifest' }] } })).toContainEqual(
      expect.stringMatching(/manifestFrom\.artifact\.name: .*needs a path/),
    );
    expect(problems({ ...apply, resource: { ...apply.resource!, manifest: 'kind: ConfigMap' } })).toContainEqual(
      expect.stringMatching(/resource\.manifestFrom: give the manifest or manifestFrom, not both/),
    );
    // Other input artifacts would be fetched for nothing: a resource template runs no container.
    expect(
      problems({ ...apply, inputs: { artifacts: [...apply.inputs!.artifacts!, { name: 'extra', path: '/tmp/x', raw: { data: 'x' } }] } }),
    ).toContainEqual(expect.stringMatching(/^spec\.templates\[apply\]\.inputs\.artifacts\[1\]: a resource template runs no container/));
    // Only the name: the peer reads nothing else of manifestFrom.artifact.
    expect(
      problems({ ...apply, resource: { action: 'create', manifestFrom: { artifact: { name: 'manifest', raw: { data: 'x' } } } } }),
    ).toContainEqual(expect.stringMatching(/manifestFrom\.artifact\.raw: .*only names an input artifact/));
    expect(problems(apply)).toEqual([]);
  });
});
