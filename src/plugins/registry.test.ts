import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { PluginConfigMapError } from './errors.js';
import { parsePluginConfigMap, type ConfigMapLike, type PluginEntry } from './parse-configmap.js';
import { PluginCatalog } from './plugin-catalog.js';
import { diffPlugins, pluginEventMessage, pluginsForWorkflow, portClashes } from './registry.js';

function container(name: string, port: number, image = 'img:1'): PluginEntry['container'] {
  return {
    name,
    image,
    ports: [{ containerPort: port }],
    resources: { requests: { cpu: '10m', memory: '16Mi' }, limits: { cpu: '100m', memory: '32Mi' } },
    securityContext: { runAsNonRoot: true, runAsUser: 1000 },
  };
}

function entry(namespace: string, name: string, port = 4000, image = 'img:1'): PluginEntry {
  return { namespace, name, container: container(name, port, image), automountServiceAccountToken: false };
}

function configMap(namespace: string, name: string, data?: Record<string, string>, labels?: Record<string, string>): ConfigMapLike {
  return {
    metadata: { namespace, name, labels: labels ?? { 'workflows.plugflow.io/configmap-type': 'ExecutorPlugin' } },
    data: data ?? { 'sidecar.container': stringify(container(name.replace(/-executor-plugin$/, ''), 4000)), 'sidecar.automountServiceAccountToken': 'false' },
  };
}

describe('pluginsForWorkflow', () => {
  const scope = { workflowNamespace: 'team', installNamespace: 'plugflow' };

  it('loads only the workflow namespace plugin on a name clash, whatever the input order', () => {
    const install = entry('plugflow', 'hello', 4000, 'shared:1');
    const local = entry('team', 'hello', 4000, 'local:1');
    for (const input of [
      [install, local],
      [local, install],
    ]) {
      const got = pluginsForWorkflow(input, scope);
      expect(got).toHaveLength(1);
      expect(got[0]).toBe(local);
    }
  });

  it('merges both namespaces, ignores others and sorts by name', () => {
    const got = pluginsForWorkflow(
      [entry('plugflow', 'zeta'), entry('other', 'alpha'), entry('team', 'mid'), entry('plugflow', 'beta'), entry('team', 'zeta', 4001)],
      scope,
    );
    expect(got.map((e) => `${e.namespace}/${e.name}`)).toEqual(['plugflow/beta', 'team/mid', 'team/zeta']);
  });

  it('works when the workflow runs in the installation namespace', () => {
    const got = pluginsForWorkflow([entry('plugflow', 'b'), entry('plugflow', 'a')], { workflowNamespace: 'plugflow', installNamespace: 'plugflow' });
    expect(got.map((e) => e.name)).toEqual(['a', 'b']);
  });
});

describe('portClashes', () => {
  it('names both plugins of a clash', () => {
    expect(portClashes([entry('a', 'one', 4000), entry('b', 'two', 4000), entry('a', 'three', 4001)])).toEqual([
      'port 4000 is used by plugin a/one and plugin b/two',
    ]);
  });
});

describe('diffPlugins', () => {
  it('reports added, updated and removed plugins with namespace and name', () => {
    const before = [entry('ns', 'keep'), entry('ns', 'change'), entry('ns', 'gone')];
    const after = [entry('ns', 'keep'), entry('ns', 'change', 4000, 'img:2'), entry('ns', 'new'), entry('other', 'keep')];
    const events = diffPlugins(before, after);
    expect(events).toEqual([
      { type: 'updated', namespace: 'ns', name: 'change' },
      { type: 'removed', namespace: 'ns', name: 'gone' },
      { type: 'added', namespace: 'ns', name: 'new' },
      { type: 'added', namespace: 'other', name: 'keep' },
    ]);
    expect(events.map(pluginEventMessage)).toEqual([
      'Executor plugin updated',
      'Executor plugin removed',
      'Executor plugin added',
      'Executor plugin added',
    ]);
  });

  it('sees a change of the token setting as an update and equal plugins as nothing', () => {
    const a = entry('ns', 'p');
    expect(diffPlugins([a], [{ ...a, container: structuredClone(a.container) }])).toEqual([]);
    expect(diffPlugins([a], [{ ...a, automountServiceAccountToken: true }])).toEqual([{ type: 'updated', namespace: 'ns', name: 'p' }]);
  });
});

describe('parsePluginConfigMap', () => {
  function reasons(cm: ConfigMapLike): string {
    try {
      parsePluginConfigMap(cm);
    } catch (err) {
      expect(err).toBeInstanceOf(PluginConfigMapError);
      return (err as Error).message;
    }
    throw new Error('expected an error');
  }

  it('reads a well-formed ConfigMap', () => {
    expect(parsePluginConfigMap(configMap('ns', 'hello-executor-plugin'))).toEqual(entry('ns', 'hello'));
  });

  it('gives the reason for each kind of malformed ConfigMap', () => {
    expect(reasons(configMap('ns', 'hello'))).toBe(
      'executor plugin ConfigMap ns/hello is malformed: metadata.name must be <plugin name>-executor-plugin',
    );
    expect(reasons(configMap('ns', 'hello-executor-plugin', {}))).toContain('data["sidecar.container"] is missing');
    expect(reasons(configMap('ns', 'hello-executor-plugin', { 'sidecar.container': 'name: [x' }))).toContain(
      'data["sidecar.container"] is not valid YAML',
    );
    expect(reasons(configMap('ns', 'hello-executor-plugin', { 'sidecar.container': 'name: x\nimagee: y\n' }))).toContain(
      'data["sidecar.container"].imagee: unknown field',
    );
    const noPorts = { ...container('hello', 1), ports: [] };
    expect(reasons(configMap('ns', 'hello-executor-plugin', { 'sidecar.container': stringify(noPorts) }))).toContain(
      'sidecar is invalid: data["sidecar.container"].ports must list at least one port',
    );
    expect(
      reasons(
        configMap('ns', 'hello-executor-plugin', {
          'sidecar.container': stringify(container('hello', 4000)),
          'sidecar.automountServiceAccountToken': 'yes',
        }),
      ),
    ).toContain('data["sidecar.automountServiceAccountToken"] must be "true" or "false", got "yes"');
    expect(reasons(configMap('ns', 'hello-executor-plugin', undefined, {}))).toContain(
      'label workflows.plugflow.io/configmap-type must be ExecutorPlugin',
    );
  });
});

describe('PluginCatalog', () => {
  it('turns ConfigMap notifications into log events and per-workflow plugin lists', () => {
    const cat = new PluginCatalog();
    expect(cat.upsert(configMap('plugflow', 'hello-executor-plugin')).events).toEqual([{ type: 'added', namespace: 'plugflow', name: 'hello' }]);
    expect(cat.upsert(configMap('plugflow', 'hello-executor-plugin')).events).toEqual([]);
    expect(cat.upsert(configMap('team', 'hello-executor-plugin')).events).toEqual([{ type: 'added', namespace: 'team', name: 'hello' }]);
    expect(cat.forWorkflow({ workflowNamespace: 'team', installNamespace: 'plugflow' }).map((e) => e.namespace)).toEqual(['team']);
    expect(cat.forWorkflow({ workflowNamespace: 'other', installNamespace: 'plugflow' }).map((e) => e.namespace)).toEqual(['plugflow']);

    const broken = cat.upsert(configMap('team', 'hello-executor-plugin', { 'sidecar.container': '{' }));
    expect(broken.error).toBeInstanceOf(PluginConfigMapError);
    expect(broken.events).toEqual([{ type: 'removed', namespace: 'team', name: 'hello' }]);
    expect(cat.forWorkflow({ workflowNamespace: 'team', installNamespace: 'plugflow' }).map((e) => e.namespace)).toEqual(['plugflow']);

    expect(cat.remove(configMap('plugflow', 'hello-executor-plugin')).events).toEqual([{ type: 'removed', namespace: 'plugflow', name: 'hello' }]);
    expect(cat.remove(configMap('plugflow', 'hello-executor-plugin')).events).toEqual([]);
    expect(cat.all()).toEqual([]);
  });

  it('resets from a relist and reports the difference and the malformed ones', () => {
    const cat = new PluginCatalog();
    cat.upsert(configMap('plugflow', 'old-executor-plugin'));
    const res = cat.reset([configMap('plugflow', 'new-executor-plugin'), configMap('plugflow', 'bad')]);
    expect(res.events).toEqual([
      { type: 'added', namespace: 'plugflow', name: 'new' },
      { type: 'removed', namespace: 'plugflow', name: 'old' },
    ]);
    expect(res.errors).toHaveLength(1);
  });
});
