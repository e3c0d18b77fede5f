import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments, stringify } from 'yaml';
import type { ExecutorPlugin } from '../api/index.js';
import { buildPlugin, GENERATED_HEADER } from './build-plugin.js';
import { PluginBuildError } from './errors.js';
import { parsePluginConfigMap } from './parse-configmap.js';
import { buildPluginDir } from './plugin-dir.js';
import { runPluginBuild } from '../cli/plugin.js';

function plugin(over: Partial<ExecutorPlugin['metadata']> = {}, automount?: boolean): ExecutorPlugin {
  return {
    apiVersion: 'plugflow.io/v1alpha1',
    kind: 'ExecutorPlugin',
    metadata: { name: 'hello', ...over },
    spec: {
      sidecar: {
        ...(automount === undefined ? {} : { automountServiceAccountToken: automount }),
        container: {
          name: 'hello',
          image: 'python:3.11-alpine',
          command: ['python3', '-c'],
          args: ['replaced'],
          ports: [{ containerPort: 4355 }],
          resources: { requests: { cpu: '100m', memory: '32Mi' }, limits: { cpu: '200m', memory: '64Mi' } },
          securityContext: { runAsNonRoot: true, runAsUser: 65534 },
        },
      },
    },
  };
}

describe('buildPlugin', () => {
  it('makes the labelled ConfigMap with the container as YAML', () => {
    const built = buildPlugin(
      plugin({
        labels: { team: 'a', 'workflows.plugflow.io/configmap-type': 'Other' },
        annotations: { 'workflows.plugflow.io/description': 'hi' },
      }),
    );
    const cm = built.configMap;
    expect(built.configMapFileName).toBe('hello-executor-plugin-configmap.yaml');
    expect(cm.metadata.name).toBe('hello-executor-plugin');
    expect(cm.metadata.labels).toEqual({ team: 'a', 'workflows.plugflow.io/configmap-type': 'ExecutorPlugin' });
    expect(cm.metadata.annotations).toEqual({ 'workflows.plugflow.io/description': 'hi' });
    expect(Object.keys(cm.data).sort()).toEqual(['sidecar.automountServiceAccountToken', 'sidecar.container']);
    expect(cm.data['sidecar.automountServiceAccountToken']).toBe('false');
    expect(parse(cm.data['sidecar.container']!)).toEqual(plugin().spec.sidecar.container);
  });

  it('quotes strings that Kubernetes (YAML 1.1) would read as booleans', () => {
    const built = buildPlugin(plugin({ labels: { mode: 'on', flag: 'yes' } }));
    expect(built.configMapYaml).toContain('mode: "on"');
    expect(built.configMapYaml).toContain('flag: "yes"');
  });

  it('writes "true" only when the plugin asks for its token', () => {
    expect(buildPlugin(plugin({}, true)).configMap.data['sidecar.automountServiceAccountToken']).toBe('true');
    expect(buildPlugin(plugin({}, false)).configMap.data['sidecar.automountServiceAccountToken']).toBe('false');
  });

  it('makes the server file text the single argument, replacing args', () => {
    const text = 'import sys\nprint("multi-line: with colons, #hashes and \'quotes\'")\n';
    const built = buildPlugin(plugin(), { fileName: 'server.py', text });
    expect(parse(built.configMap.data['sidecar.container']!).args).toEqual([text]);
  });

  it('emits a do-not-edit header and YAML that round-trips', () => {
    const built = buildPlugin(plugin({ namespace: 'tools' }));
    expect(built.configMapYaml.startsWith(GENERATED_HEADER)).toBe(true);
    expect(GENERATED_HEADER).toContain('DO NOT EDIT');
    const docs = parseAllDocuments(built.configMapYaml);
    expect(docs).toHaveLength(1);
    expect(docs[0]!.toJS()).toEqual(built.configMap);
    expect(built.configMap.metadata.namespace).toBe('tools');
  });

  it('writes a README with name, image, description, install and uninstall', () => {
    const readme = buildPlugin(plugin({ annotations: { 'workflows.plugflow.io/description': 'Says hello.' } })).readme;
    expect(readme).toContain('# hello executor plugin');
    expect(readme).toContain('Says hello.');
    expect(readme).toContain('`python:3.11-alpine`');
    expect(readme).toContain('kubectl apply -n <namespace> -f hello-executor-plugin-configmap.yaml');
    expect(readme).toContain('kubectl delete -n <namespace> configmap hello-executor-plugin');
    expect(readme).toContain('WORKFLOW_EXECUTOR_PLUGINS=true');
  });

  it('round-trips through discovery', () => {
    const built = buildPlugin(plugin({}, true), { fileName: 'server.py', text: 'print(1)\n' });
    const entry = parsePluginConfigMap({ ...built.configMap, metadata: { ...built.configMap.metadata, namespace: 'ns1' } });
    expect(entry).toEqual({
      namespace: 'ns1',
      name: 'hello',
      configMapName: 'hello-executor-plugin',
      automountServiceAccountToken: true,
      container: { ...plugin().spec.sidecar.container, args: ['print(1)\n'] },
    });
  });
});

describe('buildPluginDir', () => {
  const dirs: string[] = [];
  afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

  function pluginDir(name: string, files: Record<string, string>, parent?: string): string {
    const root = parent ?? mkdtempSync(join(tmpdir(), 'plugflow-build-'));
    if (!parent) dirs.push(root);
    const dir = join(root, name);
    mkdirSync(dir);
    for (const [f, text] of Object.entries(files)) writeFileSync(join(dir, f), text);
    return dir;
  }

  it('writes the ConfigMap and README into DIR', () => {
    const dir = pluginDir('hello', { 'plugin.yaml': stringify(plugin()), 'server.py': 'print("hi")\n' });
    const res = buildPluginDir(dir);
    expect(res.written).toEqual([join(dir, 'hello-executor-plugin-configmap.yaml'), join(dir, 'README.md')]);
    expect(res.serverFile).toBe('server.py');
    const cm = parse(readFileSync(res.written[0]!, 'utf8'));
    expect(parse(cm.data['sidecar.container']).args).toEqual(['print("hi")\n']);
    expect(readFileSync(res.written[1]!, 'utf8')).toContain('# hello executor plugin');
  });

  it('refuses more than one server file', () => {
    const dir = pluginDir('hello', { 'plugin.yaml': stringify(plugin()), 'server.py': '', 'server.js': '' });
    expect(() => buildPluginDir(dir)).toThrow(PluginBuildError);
    expect(() => buildPluginDir(dir)).toThrow(/found 2 server files \(server.js, server.py\)/);
  });

  it('refuses a directory without plugin.yaml', () => {
    const dir = pluginDir('empty', {});
    expect(() => buildPluginDir(dir)).toThrow(/plugin.yaml not found/);
  });

  it('warns when a sibling plugin uses the same port', () => {
    const first = pluginDir('hello', { 'plugin.yaml': stringify(plugin()) });
    const other = plugin({ name: 'other' });
    other.spec.sidecar.container.name = 'other';
    const root = join(first, '..');
    pluginDir('other', { 'plugin.yaml': stringify(other) }, root);
    const res = buildPluginDir(first);
    expect(res.warnings).toEqual([`port 4355 is also used by plugin other (${join(root, 'other')}); both cannot run in one agent pod`]);
  });

  it('`plugflow plugin build` prints what it wrote, or every problem and exits 1', () => {
    const lines: string[] = [];
    const p = { out: (l: string) => lines.push(l), err: (l: string) => lines.push(`ERR ${l}`) };
    const good = pluginDir('hello', { 'plugin.yaml': stringify(plugin()), 'server.py': 'print(1)\n' });
    expect(runPluginBuild(good, p)).toBe(0);
    expect(lines).toEqual([
      'plugin hello (server file server.py → sidecar args):',
      `  wrote ${join(good, 'hello-executor-plugin-configmap.yaml')}`,
      `  wrote ${join(good, 'README.md')}`,
    ]);
    lines.length = 0;
    const bad = plugin();
    delete (bad.spec.sidecar.container as { ports?: unknown }).ports;
    delete (bad.spec.sidecar.container.resources!.limits as Record<string, string>).cpu;
    const badDir = pluginDir('bad', { 'plugin.yaml': stringify(bad) });
    expect(runPluginBuild(badDir, p)).toBe(1);
    expect(lines[0]).toBe(`ERR ${join(badDir, 'plugin.yaml')} cannot be built:`);
    expect(lines.slice(1).every((l) => l.startsWith('ERR   sidecar is invalid: spec.sidecar.container.'))).toBe(true);
    expect(lines).toHaveLength(3);
  });
});
