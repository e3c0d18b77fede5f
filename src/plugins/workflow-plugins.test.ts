import { describe, expect, it } from 'vitest';
import { DEFAULT_AGENT_HEALTH_PORT } from './agent-names.js';
import { buildAgentPod } from '../pods/agent-pod.js';
import { hasWorkflowPlugins, readWorkflowPlugins, WORKFLOW_PLUGIN_TOKEN_DETAIL, workflowPluginEntries } from './workflow-plugins.js';

/** A workflow-level plugin as the peer's example declares it, with the user id plugflow requires. */
function plugin(name = 'hello', port = 4356, edit: (c: Record<string, any>) => void = () => {}) {
  const container: Record<string, any> = {
    name,
    image: 'python:alpine3.23',
    command: ['python', '-c'],
    args: ['print(1)'],
    ports: [{ containerPort: port }],
    resources: { limits: { cpu: '200m', memory: '64Mi' }, requests: { cpu: '100m', memory: '32Mi' } },
    securityContext: {
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      runAsUser: 65534,
    },
  };
  edit(container);
  return { metadata: { name }, spec: { sidecar: { container } } };
}

const problemsOf = (list: unknown) => readWorkflowPlugins(list, 'ns').problems.map((p) => `${p.field} ${p.detail}`);

describe('workflow-level executor plugins (spec.executorPlugins)', () => {
  it('reads a plugin into the entry a ConfigMap plugin gives, in the workflow namespace, without an API token', () => {
    const read = readWorkflowPlugins([plugin()], 'team-a');
    expect(read.problems).toEqual([]);
    expect(read.entries).toEqual([
      {
        namespace: 'team-a',
        name: 'hello',
        configMapName: '',
        declaredAt: 'spec.executorPlugins[0]',
        container: plugin().spec.sidecar.container,
        automountServiceAccountToken: false,
      },
    ]);
  });

  it('an empty or absent list declares no plugin (as in the peer)', () => {
    expect(hasWorkflowPlugins({})).toBe(false);
    expect(hasWorkflowPlugins({ executorPlugins: [] })).toBe(false);
    expect(hasWorkflowPlugins({ executorPlugins: [plugin()] })).toBe(true);
    expect(readWorkflowPlugins(undefined, 'ns')).toEqual({ entries: [], problems: [] });
  });

  it('never lets a plugin run as root, privileged, with added capabilities or privilege escalation, naming the field', () => {
    const sc = 'spec.executorPlugins[0].spec.sidecar.container.securityContext';
    expect(problemsOf([plugin('hello', 4356, (c) => (c.securityContext.runAsUser = 0))])).toEqual([
      `${sc}.runAsUser is 0 (root); plugins never run as root, choose a non-zero user id`,
    ]);
    expect(problemsOf([plugin('hello', 4356, (c) => (c.securityContext.runAsNonRoot = false))])).toEqual([
      `${sc}.runAsNonRoot is false; it must be true (plugins never run as root)`,
    ]);
    expect(problemsOf([plugin('hello', 4356, (c) => delete c.securityContext.runAsUser)])).toEqual([
      `${sc}.runAsUser is required (a numeric user id, for example 1000)`,
    ]);
    expect(
      problemsOf([
        plugin('hello', 4356, (c) => {
          c.securityContext.privileged = true;
          c.securityContext.capabilities.add = ['SYS_ADMIN'];
          c.securityContext.allowPrivilegeEscalation = true;
        }),
      ]),
    ).toEqual([
      `${sc}.privileged must be false or absent (plugins are never privileged)`,
      `${sc}.capabilities.add must be absent (plugins get no added capabilities)`,
      `${sc}.allowPrivilegeEscalation must be false or absent (the agent pod sets false)`,
    ]);
  });

  it('gives the plugin its own token only: no service account token, no volumes', () => {
    const withToken = plugin();
    (withToken.spec.sidecar as Record<string, unknown>).automountServiceAccountToken = true;
    expect(problemsOf([withToken])).toEqual([
      `spec.executorPlugins[0].spec.sidecar.automountServiceAccountToken ${WORKFLOW_PLUGIN_TOKEN_DETAIL}`,
    ]);
    expect(problemsOf([plugin('hello', 4356, (c) => (c.volumeMounts = [{ name: 'host', mountPath: '/host' }]))])).toEqual([
      'spec.executorPlugins[0].spec.sidecar.container.volumeMounts[0] (host at /host) cannot be used: the agent pod has no volumes for plugins, it only mounts the token at /var/run/workflow',
    ]);
  });

  it('checks names, the container shape, resources and ports as plugin.yaml does', () => {
    const bad = [
      { metadata: {}, spec: { sidecar: { container: plugin().spec.sidecar.container } } },
      plugin('Bad_Name', 4357),
      plugin('typo', 4358, (c) => (c.imagePullPolicyy = 'Always')),
      plugin('nores', 4359, (c) => delete c.resources.limits),
      { metadata: { name: 'nosidecar' }, spec: {} },
    ];
    expect(problemsOf(bad)).toEqual([
      "spec.executorPlugins[0].metadata.name is required: the plugin's name, a DNS label",
      `spec.executorPlugins[1].metadata.name "Bad_Name" must be a DNS label (lower-case letters, digits and '-', starting and ending with a letter or digit)`,
      'spec.executorPlugins[1].spec.sidecar.container.name "Bad_Name" must be a DNS label: lower-case letters, digits and \'-\', at most 63 characters',
      'spec.executorPlugins[2].spec.sidecar.container.imagePullPolicyy unknown field',
      'spec.executorPlugins[3].spec.sidecar.container.resources.limits.cpu is required (resources.requests and resources.limits must both give cpu and memory)',
      'spec.executorPlugins[3].spec.sidecar.container.resources.limits.memory is required (resources.requests and resources.limits must both give cpu and memory)',
      'spec.executorPlugins[4].spec.sidecar is required: the plugin server container (spec.sidecar.container)',
    ]);
    expect(problemsOf({ hello: plugin() })).toEqual([
      'spec.executorPlugins must be a list of executor plugins (metadata.name and spec.sidecar.container each)',
    ]);
  });

  it('refuses plugins of one workflow that would clash in its agent pod: name, container name, port, the health port', () => {
    expect(
      problemsOf([
        plugin('a', 5001),
        plugin('a', 5002, (c) => (c.name = 'a2')),
        plugin('b', 5003, (c) => (c.name = 'a')),
        plugin('c', 5001),
        plugin('d', DEFAULT_AGENT_HEALTH_PORT),
      ]),
    ).toEqual([
      'spec.executorPlugins[1].metadata.name "a" is also the name of spec.executorPlugins[0]; plugin names are unique',
      'spec.executorPlugins[2].spec.sidecar.container.name "a" is also the container name of spec.executorPlugins[0] (plugin a); the plugins share one agent pod: rename the container',
      'spec.executorPlugins[3].spec.sidecar.container.ports[0].containerPort 5001 is also a port of spec.executorPlugins[0] (plugin a); the plugins of an agent pod share its network: choose another port',
      `spec.executorPlugins[4].spec.sidecar.container.ports[0].containerPort ${DEFAULT_AGENT_HEALTH_PORT} is the agent's health port; choose another port`,
    ]);
  });

  it('gives the controller entries or an error naming every problem', () => {
    expect(workflowPluginEntries({ executorPlugins: [plugin()] }, 'ns').map((e) => e.name)).toEqual(['hello']);
    expect(() => workflowPluginEntries({ executorPlugins: [plugin('x', 1, (c) => (c.securityContext.runAsUser = 0))] }, 'ns')).toThrow(
      'spec.executorPlugins[0].spec.sidecar.container.securityContext.runAsUser is 0 (root)',
    );
  });

  it('runs in the agent pod like a ConfigMap plugin: non-root, hardened, mounting only its own token', () => {
    const entries = workflowPluginEntries({ executorPlugins: [plugin('hello', 4356), plugin('other', 4357)] }, 'ns');
    const pod = buildAgentPod({ metadata: { name: 'wf', namespace: 'ns', uid: 'u' } }, entries, { image: 'plugflow' });
    const sidecar = pod.spec!.containers.find((c) => c.name === 'hello')!;
    expect(sidecar.volumeMounts).toEqual([{ name: 'token-hello', mountPath: '/var/run/workflow', readOnly: true }]);
    expect(sidecar.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 65534, allowPrivilegeEscalation: false });
    expect(pod.spec!.containers.find((c) => c.name === 'main')!.args).toEqual(
      expect.arrayContaining(['--plugin', 'hello=http://localhost:4356', '--plugin', 'other=http://localhost:4357']),
    );
  });
});
