import { describe, expect, it } from 'vitest';
import { LABEL_CONFIGMAP_TYPE, CONFIGMAP_TYPE_EXECUTOR_PLUGIN } from '../api/index.js';
import type { ConfigMapLike } from './parse-configmap.js';
import { pluginInventory } from './plugin-inventory.js';

const cm = (namespace: string, name: string, container: string): ConfigMapLike => ({
  metadata: { namespace, name, labels: { [LABEL_CONFIGMAP_TYPE]: CONFIGMAP_TYPE_EXECUTOR_PLUGIN } },
  data: { 'sidecar.container': container },
});
const sidecar = (name: string, port: number) =>
  `name: ${name}\nimage: img/${name}\nports: [{containerPort: ${port}}]\nsecurityContext: {runAsNonRoot: true, runAsUser: 65534}\n` +
  'resources: {requests: {cpu: 10m, memory: 16Mi}, limits: {cpu: 10m, memory: 16Mi}}\n';

describe('the plugin inventory', () => {
  const scope = { workflowNamespace: 'team', installNamespace: 'plugflow' };

  it("marks the plugins a namespace's workflows get as used, and the installation's same-named one as shadowed", () => {
    const inv = pluginInventory(
      [cm('team', 'a-executor-plugin', sidecar('a', 4000)), cm('plugflow', 'a-executor-plugin', sidecar('a', 4000))],
      scope,
    );
    expect(inv.plugins.map((p) => [p.namespace, p.state, p.instead])).toEqual([
      ['team', 'used', undefined],
      ['plugflow', 'shadowed', 'team/a-executor-plugin'],
    ]);
  });

  it("leaves out a plugin whose port clashes with another's, naming both", () => {
    const inv = pluginInventory(
      [cm('team', 'a-executor-plugin', sidecar('a', 4000)), cm('plugflow', 'b-executor-plugin', sidecar('b', 4000))],
      scope,
    );
    const b = inv.plugins.find((p) => p.plugin === 'b')!;
    expect(b.state).toBe('left-out');
    expect(b.reason).toMatch(/4000/);
    expect(b.instead).toBe('team/a-executor-plugin');
  });

  it('lists a malformed ConfigMap with its problems, and ignores other namespaces', () => {
    const inv = pluginInventory(
      [cm('team', 'x-executor-plugin', 'name: ['), cm('elsewhere', 'c-executor-plugin', sidecar('c', 4001))],
      scope,
    );
    expect(inv.plugins).toHaveLength(1);
    expect(inv.plugins[0]).toMatchObject({ configMap: 'x-executor-plugin', state: 'malformed' });
    expect(inv.plugins[0].reason).toBeTruthy();
  });
});
