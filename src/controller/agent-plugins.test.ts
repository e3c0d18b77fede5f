import { describe, expect, it } from 'vitest';
import type { Workflow } from '../api/index.js';
import { WORKFLOW_PLUGINS_DISABLED_DETAIL } from '../engine/workflow-plugins.js';
import type { PluginEntry } from '../plugins/index.js';
import { agentPluginsOf } from './agent-plugins.js';

const container = (name: string, port: number) => ({
  name,
  image: 'python:3.12-alpine',
  ports: [{ containerPort: port }],
  resources: { requests: { cpu: '50m', memory: '32Mi' }, limits: { cpu: '200m', memory: '64Mi' } },
  securityContext: { runAsNonRoot: true, runAsUser: 65534 },
});

const configMapPlugin = (namespace: string, name: string, port: number): PluginEntry => ({
  namespace,
  name,
  configMapName: `${name}-executor-plugin`,
  container: container(name, port),
  automountServiceAccountToken: false,
});

const discovered = [configMapPlugin('team', 'hello', 4355), configMapPlugin('plugflow', 'other', 4400)];

function wf(own?: Array<{ name: string; port: number }>): Workflow {
  return {
    apiVersion: 'plugflow.io/v1alpha1',
    kind: 'Workflow',
    metadata: { name: 'w', namespace: 'team' },
    spec: {
      entrypoint: 'main',
      templates: [{ name: 'main', plugin: { hello: {} } }],
      ...(own
        ? { executorPlugins: own.map((p) => ({ metadata: { name: p.name }, spec: { sidecar: { container: container(p.name, p.port) } } })) }
        : {}),
    },
  };
}

const sources = (pluginsEnabled: boolean, workflowLevelPluginsEnabled: boolean) => ({
  pluginsEnabled,
  workflowLevelPluginsEnabled,
  pluginsFor: (ns: string) => discovered.filter((p) => p.namespace === ns || p.namespace === 'plugflow'),
});

describe('the plugins of an agent pod', () => {
  it("are the workflow's own when it declares some: they replace every ConfigMap plugin, the one of the same name included", () => {
    const plugins = agentPluginsOf(wf([{ name: 'hello', port: 4356 }]), sources(true, true));
    expect(plugins.map((p) => [p.namespace, p.name, p.declaredAt, p.container.ports![0]!.containerPort])).toEqual([
      ['team', 'hello', 'spec.executorPlugins[0]', 4356],
    ]);
  });

  it('need only the workflow-level gate for its own plugins', () => {
    expect(agentPluginsOf(wf([{ name: 'mine', port: 4357 }]), sources(false, true)).map((p) => p.name)).toEqual(['mine']);
  });

  it('cannot be built when the workflow declares plugins and the gate is off, naming the field and the gate', () => {
    expect(() => agentPluginsOf(wf([{ name: 'hello', port: 4356 }]), sources(true, false))).toThrow(
      `spec.executorPlugins ${WORKFLOW_PLUGINS_DISABLED_DETAIL}`,
    );
  });

  it('are the discovered ConfigMap plugins otherwise (an empty list declares none), and none with that gate off', () => {
    expect(agentPluginsOf(wf(), sources(true, true)).map((p) => `${p.namespace}/${p.name}`)).toEqual(['team/hello', 'plugflow/other']);
    expect(agentPluginsOf(wf([]), sources(true, false)).map((p) => p.name)).toEqual(['hello', 'other']);
    expect(agentPluginsOf(wf(), sources(false, true))).toEqual([]);
  });

  it('checks the sidecar rules again: a plugin asking for root never reaches the agent pod', () => {
    const hostile = wf([{ name: 'hello', port: 4356 }]);
    hostile.spec.executorPlugins![0]!.spec.sidecar.container.securityContext = { runAsNonRoot: false, runAsUser: 0 };
    expect(() => agentPluginsOf(hostile, sources(true, true))).toThrow(
      'spec.executorPlugins[0].spec.sidecar.container.securityContext.runAsNonRoot is false; it must be true (plugins never run as root)',
    );
  });
});
