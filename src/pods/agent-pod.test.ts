import type { V1Container, V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { AGENT_TOKEN_DIR, AgentPodError, SERVICE_ACCOUNT_DIR, type PluginEntry } from '../plugins/index.js';
import { shardBucketLabel } from '../api/index.js';
import { agentPodName, buildAgentPod, pluginServiceAccount } from './agent-pod.js';

function entry(name: string, port: number, uid: number, extra: Partial<PluginEntry> = {}): PluginEntry {
  return {
    namespace: 'team',
    name,
    configMapName: `${name}-executor-plugin`,
    automountServiceAccountToken: false,
    container: {
      name,
      image: `${name}:1`,
      ports: [{ containerPort: port }],
      resources: { requests: { cpu: '10m', memory: '16Mi' }, limits: { cpu: '100m', memory: '32Mi' } },
      securityContext: { runAsNonRoot: true, runAsUser: uid },
    },
    ...extra,
  };
}

const wf = { metadata: { name: 'wf1', namespace: 'team', uid: 'uid-1' } };
const opts = { image: 'plugflow:dev', serviceAccountName: 'runner' };

function containerByName(pod: V1Pod, name: string): V1Container {
  const c = [...(pod.spec!.initContainers ?? []), ...pod.spec!.containers].find((x) => x.name === name);
  if (!c) throw new Error(`no container ${name}`);
  return c;
}

describe('buildAgentPod', () => {
  const plugins = [entry('alpha', 4001, 1001), entry('beta', 4002, 1002)];
  const pod = buildAgentPod(wf, plugins, opts);

  it('is named after the workflow, owned by it and labelled', () => {
    expect(pod.metadata!.name).toBe('wf1-agent');
    expect(pod.metadata!.namespace).toBe('team');
    expect(pod.metadata!.ownerReferences).toEqual([
      { apiVersion: 'plugflow.io/v1alpha1', kind: 'Workflow', name: 'wf1', uid: 'uid-1', controller: true },
    ]);
    expect(pod.metadata!.labels).toEqual({
      'workflows.plugflow.io/workflow': 'wf1',
      'workflows.plugflow.io/shard-bucket': shardBucketLabel(pod.metadata!.namespace!, 'wf1'),
      'workflows.plugflow.io/component': 'agent',
    });
    expect(agentPodName('x'.repeat(260)).length).toBeLessThanOrEqual(253);
  });

  it('has an init container, the main container and one sidecar per plugin', () => {
    expect(pod.spec!.initContainers!.map((c) => c.name)).toEqual(['init']);
    expect(pod.spec!.containers.map((c) => c.name)).toEqual(['main', 'alpha', 'beta']);
    expect(containerByName(pod, 'init').args).toEqual([
      'agent',
      'init',
      '--token-dir',
      AGENT_TOKEN_DIR,
      '--plugin',
      'alpha',
      '--plugin',
      'beta',
    ]);
    const args = containerByName(pod, 'main').args!;
    expect(args.slice(0, 2)).toEqual(['agent', '--workflow']);
    expect(args).toContain('alpha=http://localhost:4001');
    expect(args).toContain('beta=http://localhost:4002');
    expect(args.join(' ')).toContain(`--namespace team --workflow-uid uid-1 --token-dir ${AGENT_TOKEN_DIR}`);
  });

  it('shows each sidecar only its own token volume, read-only at /var/run/workflow', () => {
    for (const p of plugins) {
      const mounts = containerByName(pod, p.name).volumeMounts!;
      expect(mounts).toEqual([{ name: `token-${p.name}`, mountPath: '/var/run/workflow', readOnly: true }]);
    }
    // Each token volume is its own emptyDir (not a shared one with subPaths), in memory.
    for (const p of plugins) {
      const v = pod.spec!.volumes!.find((x) => x.name === `token-${p.name}`)!;
      expect(v.emptyDir).toEqual({ medium: 'Memory', sizeLimit: '1Mi' });
    }
    // The init container writes all tokens; the main container reads all, read-only.
    expect(containerByName(pod, 'init').volumeMounts!.map((m) => [m.name, m.mountPath, m.readOnly])).toEqual([
      ['token-alpha', `${AGENT_TOKEN_DIR}/alpha`, false],
      ['token-beta', `${AGENT_TOKEN_DIR}/beta`, false],
    ]);
    const mainMounts = containerByName(pod, 'main').volumeMounts!;
    expect(mainMounts.filter((m) => m.name.startsWith('token-')).every((m) => m.readOnly)).toBe(true);
  });

  it('makes tokens readable by every sidecar user through fsGroup without root anywhere', () => {
    const sc = pod.spec!.securityContext!;
    expect(sc).toMatchObject({ runAsNonRoot: true, fsGroup: 8737, seccompProfile: { type: 'RuntimeDefault' } });
    expect(pod.spec!.shareProcessNamespace).toBe(false);
    for (const c of [...pod.spec!.initContainers!, ...pod.spec!.containers]) {
      expect(c.securityContext, c.name).toMatchObject({
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        capabilities: { drop: ['ALL'] },
      });
      expect(c.securityContext!.capabilities!.add, c.name).toBeUndefined();
      expect(c.securityContext!.runAsUser, c.name).not.toBe(0);
    }
    // The plugin keeps its own user.
    expect(containerByName(pod, 'alpha').securityContext!.runAsUser).toBe(1001);
  });

  it('never carries a token: the spec is the same on every build and has no token values', () => {
    expect(buildAgentPod(wf, plugins, opts)).toEqual(pod);
    const envs = [...pod.spec!.initContainers!, ...pod.spec!.containers].flatMap((c) => c.env ?? []);
    expect(envs).toEqual([]);
  });

  it('gives the API token to the main container only', () => {
    expect(pod.spec!.automountServiceAccountToken).toBe(false);
    expect(pod.spec!.serviceAccountName).toBe('runner');
    const withApi = [...pod.spec!.initContainers!, ...pod.spec!.containers].filter((c) =>
      (c.volumeMounts ?? []).some((m) => m.mountPath === SERVICE_ACCOUNT_DIR),
    );
    expect(withApi.map((c) => c.name)).toEqual(['main']);
    const api = pod.spec!.volumes!.find((v) => v.name === 'kube-api-access')!;
    expect(api.projected!.sources!.map((s) => Object.keys(s)[0])).toEqual(['serviceAccountToken', 'configMap', 'downwardAPI']);
  });

  it("mounts a plugin's own service account token only into that plugin when it asks", () => {
    const p = [entry('alpha', 4001, 1001, { automountServiceAccountToken: true }), entry('beta', 4002, 1002)];
    expect(() => buildAgentPod(wf, p, opts)).toThrow(AgentPodError);
    expect(() => buildAgentPod(wf, p, opts)).toThrow(/plugin team\/alpha asks for a service account token.*alpha-executor-plugin/);
    const pod2 = buildAgentPod(wf, p, { ...opts, pluginTokenSecrets: { alpha: 'alpha-executor-plugin-token' } });
    expect(containerByName(pod2, 'alpha').volumeMounts).toContainEqual({
      name: 'sa-alpha',
      mountPath: SERVICE_ACCOUNT_DIR,
      readOnly: true,
    });
    expect(containerByName(pod2, 'beta').volumeMounts!.some((m) => m.mountPath === SERVICE_ACCOUNT_DIR)).toBe(false);
    expect(pod2.spec!.volumes!.find((v) => v.name === 'sa-alpha')!.secret!.secretName).toBe('alpha-executor-plugin-token');
    expect(pluginServiceAccount({ namespace: 'plugflow', name: 'alpha' })).toEqual({
      namespace: 'plugflow',
      name: 'alpha-executor-plugin',
    });
  });

  it('lets a plugin loosen the hardening defaults deliberately', () => {
    const p = entry('alpha', 4001, 1001);
    p.container.securityContext = { runAsNonRoot: true, runAsUser: 1001, readOnlyRootFilesystem: false };
    expect(containerByName(buildAgentPod(wf, [p], opts), 'alpha').securityContext!.readOnlyRootFilesystem).toBe(false);
  });

  it('refuses clashing ports, container names and the health port', () => {
    expect(() => buildAgentPod(wf, [entry('a', 4000, 1), entry('b', 4000, 1)], opts)).toThrow(
      /port 4000 is used by plugin team\/a and plugin team\/b/,
    );
    const sameName = entry('b', 4001, 1);
    sameName.container.name = 'a';
    expect(() => buildAgentPod(wf, [entry('a', 4000, 1), sameName], opts)).toThrow(/both name their container "a"/);
    expect(() => buildAgentPod(wf, [entry('a', 9766, 1)], opts)).toThrow(/listens on 9766, the agent's health port/);
  });

  it('needs no init container and no token volumes without plugins (http templates only)', () => {
    const bare = buildAgentPod(wf, [], opts);
    expect(bare.spec!.initContainers).toEqual([]);
    expect(bare.spec!.containers.map((c) => c.name)).toEqual(['main']);
    expect(bare.spec!.volumes!.map((v) => v.name)).toEqual(['kube-api-access']);
  });
});
