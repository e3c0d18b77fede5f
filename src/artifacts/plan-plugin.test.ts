import { describe, expect, it } from 'vitest';
import type { Template, Workflow } from '../api/index.js';
import { buildStepPod } from '../pods/build-pod.js';
import { buildArtifactGCPod } from '../pods/artifact-gc-pod.js';
import { validateWorkflow } from '../engine/validate.js';
import { parseArtifactDrivers } from './drivers.js';
import { ArtifactPlanError, gcPlan, keyVariables, planArtifacts } from './plan.js';
import type { ArtifactRepository } from './repository.js';
import { parseRepository } from './repository.js';

const drivers = parseArtifactDrivers(
  '[{name: dirstore, image: example.com/dirstore:1, connectionTimeoutSeconds: 9, command: [node, /drv.js]}, {name: other, image: example.com/other:2}]',
);
const vars = keyVariables({ name: 'wf', namespace: 'ns', uid: 'u' }, 'wf-1');
const plugin = (key?: string) => ({ name: 'dirstore', configuration: 'dir: /store\n', ...(key ? { key } : {}) });
const workflow: Workflow = {
  apiVersion: 'plugflow.io/v1alpha1',
  kind: 'Workflow',
  metadata: { name: 'wf', namespace: 'ns', uid: 'uid-1' },
  spec: { templates: [] },
};

describe('artifact driver plugins in the plan', () => {
  it('loads an input and saves an output through the driver, with the effective connection timeout', () => {
    const t: Template = {
      name: 't',
      inputs: { artifacts: [{ name: 'in', path: '/in', plugin: { ...plugin('a/in.txt'), connectionTimeoutSeconds: 3 } }] },
      outputs: { artifacts: [{ name: 'out', path: '/out', plugin: plugin('hi') }] },
    };
    const plan = planArtifacts(t, undefined, vars, { artifactDrivers: drivers });
    expect(plan.inputs[0]!.source).toEqual({
      plugin: { kind: 'plugin', name: 'dirstore', configuration: 'dir: /store\n', key: 'a/in.txt', connectionTimeoutSeconds: 3 },
    });
    expect(plan.outputs[0]).toMatchObject({
      name: 'out',
      plugin: { kind: 'plugin', name: 'dirstore', key: 'hi', connectionTimeoutSeconds: 9 },
      record: { name: 'out', path: '/out', plugin: plugin('hi') },
    });
    expect(plan.drivers).toEqual(['dirstore']);
    expect(plan.secrets).toEqual([]);
  });

  it('stores outputs and main-logs in a plugin repository under its key format; a key-only input takes its driver', () => {
    const repo: ArtifactRepository = {
      source: 'ns/artifact-repositories#p',
      ...parseRepository('plugin:\n  name: dirstore\n  configuration: "dir: /store"\n  keyFormat: "runs/{{workflow.name}}"\n', 'cm'),
    };
    const t: Template = {
      name: 't',
      inputs: { artifacts: [{ name: 'in', path: '/in', plugin: { key: 'given/in' } }] },
      outputs: { artifacts: [{ name: 'out', path: '/out' }] },
    };
    const plan = planArtifacts(t, repo, vars, { artifactDrivers: drivers, archiveLogs: true, logFile: '/var/run/plugflow/main.log' });
    expect(plan.inputs[0]!.source).toMatchObject({ plugin: { name: 'dirstore', key: 'given/in', configuration: 'dir: /store' } });
    expect(plan.outputs.map((o) => o.plugin?.key)).toEqual(['runs/wf/out.tgz', 'runs/wf/main-logs.tgz']);
    expect(plan.outputs[0]!.record.plugin).toEqual({ name: 'dirstore', configuration: 'dir: /store', key: 'runs/wf/out.tgz' });
  });

  it('refuses a driver the controller does not run, naming the field and the drivers it has', () => {
    const t: Template = { name: 't', outputs: { artifacts: [{ name: 'out', path: '/out', plugin: { ...plugin('k'), name: 'nope' } }] } };
    expect(() => planArtifacts(t, undefined, vars, { artifactDrivers: drivers })).toThrow(ArtifactPlanError);
    expect(() => planArtifacts(t, undefined, vars, { artifactDrivers: drivers })).toThrow(
      `template "t": outputs.artifacts[out].plugin.name names artifact driver "nope", which the controller does not run (it has "dirstore", "other"; an operator registers drivers in the controller's PLUGFLOW_ARTIFACT_DRIVERS)`,
    );
  });

  it('refuses an unregistered driver when the workflow starts (the controller passes its drivers to validation)', () => {
    const wf: Workflow = {
      ...workflow,
      spec: {
        entrypoint: 'main',
        templates: [
          {
            name: 'main',
            container: { image: 'alpine', command: ['true'] },
            outputs: { artifacts: [{ name: 'o', path: '/o', plugin: { ...plugin('k'), name: 'missing' } }] },
          },
        ],
      },
    };
    const messages = (names: string[] | undefined) =>
      validateWorkflow(wf, {}, undefined, names ? { artifactDrivers: names } : undefined).map((e) => e.message);
    expect(messages(['dirstore'])).toEqual([
      `spec.templates[main].outputs.artifacts[o].plugin.name names artifact driver "missing", which the controller does not run (it has "dirstore"; an operator registers drivers in the controller's PLUGFLOW_ARTIFACT_DRIVERS)`,
    ]);
    expect(messages(undefined)).toEqual([]); // lint and the server do not know the controller's drivers
  });
});

describe('the driver containers of a step pod', () => {
  const t: Template = {
    name: 't',
    container: { image: 'alpine', command: ['sh', '-c', 'true'] },
    automountServiceAccountToken: true,
    inputs: { artifacts: [{ name: 'in', path: '/in', plugin: plugin('k') }] },
    outputs: { artifacts: [{ name: 'out', path: '/out', plugin: plugin('o') }] },
    podSpecPatch: '{"initContainers":[{"name":"artifact-plugin-dirstore","image":"evil"}]}',
  };
  const build = (tmpl: Template) =>
    buildStepPod({
      workflow,
      nodeId: 'n',
      podName: 'p',
      template: tmpl,
      executorImage: 'plugflow:1',
      artifacts: planArtifacts(tmpl, undefined, vars, { artifactDrivers: drivers }),
      artifactDrivers: drivers,
    });

  it('runs the driver as a sidecar before init, sharing only its socket directory with init and wait, without a token', () => {
    const { podSpecPatch: _p, ...plain } = t;
    const spec = build(plain).spec!;
    expect(spec.initContainers!.map((c) => c.name)).toEqual(['artifact-plugin-dirstore', 'init']);
    const driver = spec.initContainers![0]!;
    expect(driver).toMatchObject({
      image: 'example.com/dirstore:1',
      command: ['node', '/drv.js'],
      args: ['/tmp/artifact-plugins/dirstore/socket'],
      restartPolicy: 'Always',
      securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
    });
    expect(driver.env).toBeUndefined();
    expect(driver.volumeMounts).toEqual([
      { name: 'artifact-plugin-dirstore', mountPath: '/tmp/artifact-plugins/dirstore' },
      { name: 'artifact-plugin-no-token', mountPath: '/var/run/secrets/kubernetes.io/serviceaccount', readOnly: true },
    ]);
    const mounts = (name: string) =>
      [...spec.initContainers!, ...spec.containers].find((c) => c.name === name)!.volumeMounts!.map((m) => m.mountPath);
    expect(mounts('init')).toContain('/tmp/artifact-plugins/dirstore');
    expect(mounts('wait')).toContain('/tmp/artifact-plugins/dirstore');
    expect(mounts('main')).not.toContain('/tmp/artifact-plugins/dirstore');
    expect(spec.volumes).toEqual(expect.arrayContaining([{ name: 'artifact-plugin-dirstore', emptyDir: {} }]));
  });

  it('refuses a podSpecPatch that would add a container under the driver container name', () => {
    expect(() => build(t)).toThrow(/container name "artifact-plugin-dirstore" is used twice/);
  });

  it('gives the artifact GC pod the drivers of the plugin artifacts it deletes', () => {
    const artifacts = [
      { name: 'out', plugin: plugin('o') },
      { name: 's3', vendorAObject: { bucket: 'b', endpoint: 'm:9000', key: 'k' } },
    ];
    expect(gcPlan(artifacts, undefined, drivers).stores[0]).toMatchObject({ kind: 'plugin', name: 'dirstore', key: 'o' });
    const pod = buildArtifactGCPod(workflow, 'OnWorkflowCompletion', artifacts, 'plugflow:1', undefined, drivers);
    expect(pod.spec!.initContainers!.map((c) => c.name)).toEqual(['artifact-plugin-dirstore']);
    expect(pod.spec!.containers[0]!.volumeMounts).toEqual([
      { name: 'artifact-plugin-dirstore', mountPath: '/tmp/artifact-plugins/dirstore' },
    ]);
  });
});

describe('PLUGFLOW_ARTIFACT_DRIVERS', () => {
  it('refuses what cannot name a container, a missing image and a repeated name', () => {
    expect(() => parseArtifactDrivers('[{name: Bad_Name, image: x}]')).toThrow(/\[0\]\.name must be a DNS label/);
    expect(() => parseArtifactDrivers('[{name: a}]')).toThrow('PLUGFLOW_ARTIFACT_DRIVERS[0].image is required');
    expect(() => parseArtifactDrivers('[{name: a, image: x}, {name: a, image: y}]')).toThrow('[1].name "a" is registered twice');
    expect(() => parseArtifactDrivers('[{name: a, image: x, env: []}]')).toThrow('[0].env is not a field of a driver');
    expect(parseArtifactDrivers('')).toEqual([]);
  });
});
