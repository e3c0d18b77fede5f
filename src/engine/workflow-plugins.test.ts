import { describe, expect, it } from 'vitest';
import type { Workflow, WorkflowSpec } from '../api/index.js';
import { PLUGINS_DISABLED_MESSAGE } from './execute-task.js';
import { World } from './test-world.js';
import { validateWorkflow } from './validate.js';
import { WORKFLOW_PLUGINS_DISABLED_DETAIL } from './workflow-plugins.js';

const sidecar = (name: string, port: number, securityContext: Record<string, unknown> = { runAsNonRoot: true, runAsUser: 65534 }) => ({
  name,
  image: 'python:3.12-alpine',
  command: ['python3', '-c', 'pass'],
  ports: [{ containerPort: port }],
  resources: { requests: { cpu: '50m', memory: '32Mi' }, limits: { cpu: '200m', memory: '64Mi' } },
  securityContext,
});

const spec = (container = sidecar('hello', 4356)): WorkflowSpec =>
  ({
    entrypoint: 'main',
    executorPlugins: [{ metadata: { name: 'hello' }, spec: { sidecar: { container } } }],
    templates: [{ name: 'main', plugin: { hello: {} } }],
  }) as WorkflowSpec;

const wf = (s: WorkflowSpec): Workflow => ({
  apiVersion: 'plugflow.io/v1alpha1',
  kind: 'Workflow',
  metadata: { name: 'w', namespace: 'ns' },
  spec: s,
});
const messages = (s: WorkflowSpec, gates?: { workflowLevelPluginsEnabled?: boolean }) =>
  validateWorkflow(wf(s), {}, undefined, gates).map((e) => e.message);

describe('spec.executorPlugins in validation', () => {
  it('is refused with the gate off, naming the field and the gate; accepted with it on', () => {
    expect(messages(spec(), { workflowLevelPluginsEnabled: false })).toEqual([`spec.executorPlugins ${WORKFLOW_PLUGINS_DISABLED_DETAIL}`]);
    expect(WORKFLOW_PLUGINS_DISABLED_DETAIL).toContain('WORKFLOW_LEVEL_EXECUTOR_PLUGINS=true');
    expect(messages(spec(), { workflowLevelPluginsEnabled: true })).toEqual([]);
    // An empty list declares nothing (as in the peer): no gate needed.
    expect(messages({ ...spec(), executorPlugins: [] }, { workflowLevelPluginsEnabled: false })).toEqual([]);
  });

  it('checks the sidecar rules wherever it is validated (lint and the server know no gate)', () => {
    expect(messages(spec())).toEqual([]);
    expect(messages(spec(sidecar('hello', 4356, { runAsNonRoot: true, runAsUser: 0, privileged: true })))).toEqual([
      'spec.executorPlugins[0].spec.sidecar.container.securityContext.runAsUser is 0 (root); plugins never run as root, choose a non-zero user id',
      'spec.executorPlugins[0].spec.sidecar.container.securityContext.privileged must be false or absent (plugins are never privileged)',
    ]);
  });

  it('walks the field catalogue: metadata fields plugflow does not read are refused by name', () => {
    const s = spec();
    (s.executorPlugins![0]!.metadata as Record<string, unknown>).namespace = 'other';
    (s.executorPlugins![0]!.spec.sidecar as Record<string, unknown>).extra = true;
    expect(messages(s)).toEqual([
      `spec.executorPlugins[0].metadata.namespace is not supported yet: a workflow's plugins run in its own agent pod, in the workflow's namespace; leave namespace out`,
      'spec.executorPlugins[0].spec.sidecar.extra is not a field plugflow knows (ExecutorPluginSidecar); check its spelling or remove it',
    ]);
  });

  it('comes from a WorkflowTemplate too (the effective spec)', () => {
    const w: Workflow = { ...wf({ workflowTemplateRef: { name: 't' } }) };
    const sources = { 'WorkflowTemplate/t': { templates: spec().templates!, spec: spec() } };
    const errors = validateWorkflow(w, sources as never, undefined, { workflowLevelPluginsEnabled: false }).map((e) => e.message);
    expect(errors).toEqual([`spec.executorPlugins ${WORKFLOW_PLUGINS_DISABLED_DETAIL}`]);
  });
});

describe('spec.executorPlugins in the engine', () => {
  it('with the gate off the workflow fails at once, naming the field and the gate; nothing is started', () => {
    const w = new World(spec());
    const r = w.reconcile();
    expect(w.status.phase).toBe('Failed');
    expect(w.status.message).toBe(`invalid spec: spec.executorPlugins ${WORKFLOW_PLUGINS_DISABLED_DETAIL}`);
    expect(r.actions.filter((a) => a.kind === 'writeTask' || a.kind === 'ensureAgent')).toEqual([]);
  });

  it('with the gate on its plugin steps run even with the ConfigMap gate off, and ConfigMap exclusions do not apply', () => {
    const w = new World(spec(), { pluginsEnabled: false });
    w.workflowLevelPluginsEnabled = true;
    w.excludedPlugins = { hello: 'ConfigMap x/hello-executor-plugin is left out of agent pods: …' };
    const r = w.reconcile();
    expect(w.node('wf')).toMatchObject({ type: 'Plugin', phase: 'Pending' });
    expect(r.actions.map((a) => a.kind)).toEqual(expect.arrayContaining(['writeTask', 'ensureAgent']));
    w.reportTask('wf', 'Succeeded', { message: 'Hello from a workflow-level executor plugin!' });
    w.reconcile();
    expect(w.status.phase).toBe('Succeeded');
  });

  it('without its own plugins a workflow still needs the ConfigMap gate for plugin steps', () => {
    const w = new World({ entrypoint: 'main', templates: [{ name: 'main', plugin: { hello: {} } }] }, { pluginsEnabled: false });
    w.workflowLevelPluginsEnabled = true;
    w.reconcile();
    expect(w.node('wf')).toMatchObject({ phase: 'Failed', message: PLUGINS_DISABLED_MESSAGE });
  });
});
