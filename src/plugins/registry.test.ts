import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { PluginConfigMapError } from './errors.js';
import { parsePluginConfigMap, type ConfigMapLike, type PluginEntry } from './parse-configmap.js';
import { PluginCatalog } from './plugin-catalog.js';
import { buildAgentPod } from '../pods/agent-pod.js';
import { diffPlugins, excludedPlugins, pluginEventMessage, pluginsForWorkflow, portClashes, selectAgentPlugins } from './registry.js';
import { errorMessage } from '../log/error-message.js';

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
  return {
    namespace,
    name,
    configMapName: `${name}-executor-plugin`,
    container: container(name, port, image),
    automountServiceAccountToken: false,
  };
}

function configMap(namespace: string, name: string, data?: Record<string, string>, labels?: Record<string, string>): ConfigMapLike {
  return {
    metadata: { namespace, name, labels: labels ?? { 'workflows.plugflow.io/configmap-type': 'ExecutorPlugin' } },
    data: data ?? {
      'sidecar.container': stringify(container(name.replace(/-executor-plugin$/, ''), 4000)),
      'sidecar.automountServiceAccountToken': 'false',
    },
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
    const got = pluginsForWorkflow([entry('plugflow', 'b'), entry('plugflow', 'a')], {
      workflowNamespace: 'plugflow',
      installNamespace: 'plugflow',
    });
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
      return errorMessage(err);
    }
    throw new Error('expected an error');
  }

  it('reads a well-formed ConfigMap', () => {
    expect(parsePluginConfigMap(configMap('ns', 'hello-executor-plugin'))).toEqual(entry('ns', 'hello'));
  });

  it('takes the plugin name from a ConfigMap name without the -executor-plugin suffix as it is (the label identifies a plugin)', () => {
    expect(parsePluginConfigMap(configMap('ns', 'hello'))).toEqual({ ...entry('ns', 'hello'), configMapName: 'hello' });
    expect(parsePluginConfigMap(configMap('ns', 'executor-plugin'))).toMatchObject({
      name: 'executor-plugin',
      configMapName: 'executor-plugin',
    });
    expect(reasons(configMap('ns', 'my.plugin'))).toContain('metadata.name (the plugin name): "my.plugin" must be a DNS label');
  });

  it('reads data["sidecar.container"] strictly but with kubectl\'s meaning of values (YAML 1.1, aliases)', () => {
    const text =
      'name: hello\nimage: img:1\nports: [{containerPort: 4000}]\nresources: &r {requests: {cpu: 10m, memory: 16Mi}, limits: {cpu: 100m, memory: 32Mi}}\nsecurityContext: {runAsNonRoot: yes, runAsUser: 1000}\n';
    expect(
      parsePluginConfigMap(configMap('ns', 'hello-executor-plugin', { 'sidecar.container': text })).container.securityContext?.runAsNonRoot,
    ).toBe(true);
    // `null` means unset, as in any Kubernetes object; it is dropped, never handed on.
    expect(
      parsePluginConfigMap(configMap('ns', 'hello-executor-plugin', { 'sidecar.container': `${text}env: null\n` })).container,
    ).not.toHaveProperty('env');
    expect(reasons(configMap('ns', 'hello-executor-plugin', { 'sidecar.container': 'name: a\nname: b\n' }))).toMatch(
      /is not valid YAML: line 2, column \d+: duplicated mapping key/,
    );
  });

  it('gives the reason for each kind of malformed ConfigMap', () => {
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
    expect(cat.upsert(configMap('plugflow', 'hello-executor-plugin')).events).toEqual([
      { type: 'added', namespace: 'plugflow', name: 'hello' },
    ]);
    expect(cat.upsert(configMap('plugflow', 'hello-executor-plugin')).events).toEqual([]);
    expect(cat.upsert(configMap('team', 'hello-executor-plugin')).events).toEqual([{ type: 'added', namespace: 'team', name: 'hello' }]);
    expect(cat.forWorkflow({ workflowNamespace: 'team', installNamespace: 'plugflow' }).map((e) => e.namespace)).toEqual(['team']);
    expect(cat.forWorkflow({ workflowNamespace: 'other', installNamespace: 'plugflow' }).map((e) => e.namespace)).toEqual(['plugflow']);

    const broken = cat.upsert(configMap('team', 'hello-executor-plugin', { 'sidecar.container': '{' }));
    expect(broken.error).toBeInstanceOf(PluginConfigMapError);
    expect(broken.events).toEqual([{ type: 'removed', namespace: 'team', name: 'hello' }]);
    expect(cat.forWorkflow({ workflowNamespace: 'team', installNamespace: 'plugflow' }).map((e) => e.namespace)).toEqual(['plugflow']);

    expect(cat.remove(configMap('plugflow', 'hello-executor-plugin')).events).toEqual([
      { type: 'removed', namespace: 'plugflow', name: 'hello' },
    ]);
    expect(cat.remove(configMap('plugflow', 'hello-executor-plugin')).events).toEqual([]);
    expect(cat.all()).toEqual([]);
  });

  it('resets from a relist and reports the difference and the malformed ones', () => {
    const cat = new PluginCatalog();
    cat.upsert(configMap('plugflow', 'old-executor-plugin'));
    const res = cat.reset([configMap('plugflow', 'new-executor-plugin'), configMap('plugflow', 'bad', { 'sidecar.container': '{' })]);
    expect(res.events).toEqual([
      { type: 'added', namespace: 'plugflow', name: 'new' },
      { type: 'removed', namespace: 'plugflow', name: 'old' },
    ]);
    expect(res.errors).toHaveLength(1);
  });
});

/** A plugin whose container is called `containerName` (not necessarily its own name). */
function named(namespace: string, name: string, containerName: string, port: number): PluginEntry {
  return {
    namespace,
    name,
    configMapName: `${name}-executor-plugin`,
    container: container(containerName, port),
    automountServiceAccountToken: false,
  };
}

const ids = (plugins: readonly PluginEntry[]): string[] => plugins.map((p) => `${p.namespace}/${p.name}`);

describe('selectAgentPlugins', () => {
  it('keeps the plugin a clashing container name belongs to and leaves the other out, whatever the order (fuzz fz-clash)', () => {
    const owner = entry('fuzz', 'soak-instant', 17300);
    const clash = named('fuzz', 'fz-clash', 'soak-instant', 17390);
    const other = entry('fuzz', 'aaa', 17500);
    for (const input of [
      [owner, clash, other],
      [clash, other, owner],
    ]) {
      const got = selectAgentPlugins(input);
      expect(ids(got.plugins)).toEqual(['fuzz/aaa', 'fuzz/soak-instant']);
      expect(got.excluded).toEqual([
        {
          plugin: clash,
          field: 'data["sidecar.container"].name',
          keptInstead: owner,
          reason:
            'ConfigMap fuzz/fz-clash-executor-plugin is left out of agent pods: its data["sidecar.container"].name "soak-instant" is also the container name of ' +
            'plugin fuzz/soak-instant (ConfigMap fuzz/soak-instant-executor-plugin), which is kept because its container is named after it; rename the container',
        },
      ]);
    }
  });

  it('keeps the first by plugin name when no plugin owns the clashing container name', () => {
    const got = selectAgentPlugins([named('ns', 'zed', 'shared', 4001), named('ns', 'abe', 'shared', 4002)]);
    expect(ids(got.plugins)).toEqual(['ns/abe']);
    expect(got.excluded[0]!.reason).toContain('which is kept because it comes first by plugin name');
  });

  it('leaves out a plugin on a port another plugin or the agent uses, naming the field', () => {
    const got = selectAgentPlugins([entry('ns', 'one', 4000), entry('ns', 'two', 4000), entry('ns', 'three', 9766)], { healthPort: 9766 });
    expect(ids(got.plugins)).toEqual(['ns/one']);
    expect(got.excluded.map((x) => [x.plugin.name, x.field, x.reason])).toEqual([
      [
        'three',
        'data["sidecar.container"].ports[0].containerPort',
        expect.stringContaining("ports[0].containerPort 9766 is the agent's health port"),
      ],
      [
        'two',
        'data["sidecar.container"].ports[0].containerPort',
        expect.stringContaining('ports[0].containerPort 4000 is also a port of plugin ns/one (ConfigMap ns/one-executor-plugin)'),
      ],
    ]);
  });

  it('gives a set of plugins an agent pod can be built from', () => {
    const input = [entry('fuzz', 'soak-instant', 17300), named('fuzz', 'fz-clash', 'soak-instant', 17390), entry('fuzz', 'dup', 17390)];
    const wf = { metadata: { name: 'x', namespace: 'fuzz', uid: 'u' } };
    expect(() => buildAgentPod(wf, input, { image: 'img' })).toThrow(
      'plugins fuzz/soak-instant and fuzz/fz-clash both name their container "soak-instant"',
    );
    const pod = buildAgentPod(wf, selectAgentPlugins(input).plugins, { image: 'img' });
    expect(pod.spec!.containers.map((c) => c.name)).toEqual(['main', 'dup', 'soak-instant']);
  });
});

describe('excludedPlugins', () => {
  it('lists each clash once across the namespaces that see it', () => {
    const shared = named('plugflow', 'b', 'same', 4001);
    const got = excludedPlugins([entry('plugflow', 'same', 4000), shared, entry('team', 'c', 4002), entry('other', 'd', 4003)], 'plugflow');
    expect(got.map((x) => x.plugin)).toEqual([shared]);
    // A clash between a workflow namespace's plugin and an installed one concerns that namespace only.
    const local = named('team', 'e', 'same', 4005);
    expect(excludedPlugins([entry('plugflow', 'same', 4000), local], 'plugflow').map((x) => x.plugin)).toEqual([local]);
  });

  it('keeps <name>-executor-plugin when a ConfigMap named <name> defines the same plugin in one namespace, whatever the order', () => {
    const canonical = entry('team', 'hello', 4000);
    const bare = { ...entry('team', 'hello', 4001), configMapName: 'hello' };
    for (const list of [
      [canonical, bare],
      [bare, canonical],
    ]) {
      expect(pluginsForWorkflow(list, { workflowNamespace: 'team', installNamespace: 'plugflow' })).toEqual([canonical]);
      const [x, ...rest] = excludedPlugins(list, 'plugflow');
      expect(rest).toEqual([]);
      expect(x).toMatchObject({ plugin: bare, keptInstead: canonical, field: 'metadata.name' });
      expect(x!.reason).toBe(
        'ConfigMap team/hello is left out of agent pods: it defines plugin hello, as ConfigMap team/hello-executor-plugin does, which is kept because it is named hello-executor-plugin; delete one of them',
      );
    }
    // In another namespace the bare one is not shadowed, and a workflow namespace still wins.
    const installed = { ...entry('plugflow', 'hello', 4002), configMapName: 'hello' };
    expect(pluginsForWorkflow([installed, bare], { workflowNamespace: 'team', installNamespace: 'plugflow' })).toEqual([bare]);
    expect(pluginsForWorkflow([installed, bare], { workflowNamespace: 'x', installNamespace: 'plugflow' })).toEqual([installed]);
  });
});

describe('PluginCatalog: clashes', () => {
  const cm = (namespace: string, name: string, containerName: string, port: number): ConfigMapLike =>
    configMap(namespace, `${name}-executor-plugin`, { 'sidecar.container': stringify(container(containerName, port)) });

  it('reports a plugin left out of agent pods once, when the clash starts, and again only if it comes back', () => {
    const cat = new PluginCatalog({ installNamespace: 'plugflow', healthPort: 9766 });
    expect(cat.upsert(cm('fuzz', 'fz-clash', 'soak-instant', 17390)).excluded).toEqual([]);
    const added = cat.upsert(cm('fuzz', 'soak-instant', 'soak-instant', 17300));
    expect(added.events).toEqual([{ type: 'added', namespace: 'fuzz', name: 'soak-instant' }]);
    expect(added.excluded.map((x) => [x.plugin.name, x.keptInstead?.name, x.field])).toEqual([
      ['fz-clash', 'soak-instant', 'data["sidecar.container"].name'],
    ]);
    // Unrelated changes do not repeat it.
    expect(cat.upsert(cm('fuzz', 'other', 'other', 17400)).excluded).toEqual([]);
    expect(cat.upsert(cm('fuzz', 'soak-instant', 'soak-instant', 17300)).excluded).toEqual([]);
    expect(ids(cat.agentPlugins('fuzz').plugins)).toEqual(['fuzz/other', 'fuzz/soak-instant']);
    expect(cat.agentPlugins('fuzz').excluded.map((x) => x.plugin.name)).toEqual(['fz-clash']);
    // Once the owner is gone the clash is over; when it returns, it is reported again.
    expect(cat.remove(cm('fuzz', 'soak-instant', 'soak-instant', 17300)).excluded).toEqual([]);
    expect(ids(cat.agentPlugins('fuzz').plugins)).toEqual(['fuzz/fz-clash', 'fuzz/other']);
    expect(cat.upsert(cm('fuzz', 'soak-instant', 'soak-instant', 17300)).excluded.map((x) => x.plugin.name)).toEqual(['fz-clash']);
  });
});
