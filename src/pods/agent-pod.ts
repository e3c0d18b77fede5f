/**
 * The agent pod of one workflow (COMPAT.md "Discovery and the agent pod"). Pure: the controller
 * creates what this returns.
 *
 * Token isolation, and why it is built this way:
 * - Every plugin gets its own `emptyDir` (in memory). The init container mounts all of them and
 *   writes one random token into each (`plugflow agent init`): tokens exist only at run time,
 *   inside the pod, never in this spec or a log.
 * - A sidecar mounts only its own volume, read-only, at `/var/run/workflow`, so it cannot see
 *   another plugin's token (separate volumes, not just separate files; process namespaces are not
 *   shared). The main container mounts all of them read-only to call every plugin.
 * - Readability by the sidecar's `runAsUser` comes from the pod's `fsGroup`: the kubelet makes
 *   each emptyDir group-owned by it with the setgid bit, every container runs with it as a
 *   supplemental group, and the token is written mode 0440. This needs no root and no
 *   CAP_CHOWN (chown-ing each token to each plugin's uid would), so every container of the pod
 *   runs non-root with all capabilities dropped and the pod passes the "restricted" Pod
 *   Security Standard — the peer's tokens were unreadable by non-root plugins.
 *
 * API access of the main container: the pod does not automount a service account token. The
 * main container alone mounts a projected volume (service account token, cluster CA, namespace)
 * at the standard path, so the in-cluster client config works there and nowhere else. A plugin
 * that asks for a token (`automountServiceAccountToken`) gets its *own* service account's token
 * (`<name>-executor-plugin`) from a Secret the controller names (see pluginServiceAccount).
 */
import type { V1Container, V1Pod, V1SecurityContext, V1Volume } from '@kubernetes/client-node';
import { createHash } from 'node:crypto';
import {
  API_VERSION,
  EXECUTOR_PLUGIN_SUFFIX,
  LABEL_COMPONENT,
  LABEL_SHARD_BUCKET,
  LABEL_WORKFLOW,
  shardBucketLabel,
  type ObjectMeta,
} from '../api/index.js';
import { checkPluginSidecar } from './pod-policy.js';
import {
  AGENT_COMPONENT,
  AGENT_CONTAINER,
  AGENT_INIT_CONTAINER,
  AGENT_TOKEN_DIR,
  AGENT_UID,
  AgentPodError,
  DEFAULT_AGENT_HEALTH_PORT,
  portClashes,
  AGENT_RESERVED_CONTAINER_NAMES,
  SERVICE_ACCOUNT_DIR,
  TOKEN_DIR_IN_SIDECAR,
  type PluginEntry,
} from '../plugins/index.js';

export interface AgentPodOptions {
  /** Image holding the `plugflow` command. */
  image: string;
  imagePullPolicy?: string;
  /** How to start plugflow in that image; default `['plugflow']`. */
  command?: string[];
  /** Service account of the agent (needs get/watch on the TaskSet, patch on its status, get on secrets for http headers). */
  serviceAccountName?: string;
  healthPort?: number;
  /** Tasks the agent runs at once. */
  concurrency?: number;
  /** Plugin name → Secret (in the workflow's namespace) holding the plugin's own service account token. */
  pluginTokenSecrets?: Record<string, string>;
  /** Resources of the agent's main and init containers. */
  resources?: { main?: V1Container['resources']; init?: V1Container['resources'] };
  /** Extra env for the main container (e.g. PLUGFLOW_LOG_LEVEL). */
  env?: Record<string, string>;
}

export interface AgentWorkflow {
  metadata: Pick<ObjectMeta, 'name' | 'namespace' | 'uid'>;
}

const DEFAULT_MAIN_RESOURCES = { requests: { cpu: '50m', memory: '96Mi' }, limits: { cpu: '500m', memory: '256Mi' } };
const DEFAULT_INIT_RESOURCES = { requests: { cpu: '10m', memory: '64Mi' }, limits: { cpu: '200m', memory: '128Mi' } };

/** `<workflow>-agent`; a name too long for a pod is shortened with a hash suffix. */
export function agentPodName(workflowName: string): string {
  const name = `${workflowName}-agent`;
  if (name.length <= 253) return name;
  const hash = createHash('sha256').update(workflowName).digest('hex').slice(0, 8);
  return `${workflowName.slice(0, 253 - '-agent'.length - 9)}-${hash}-agent`;
}

/** The plugin's own service account, in the namespace its ConfigMap came from. */
export function pluginServiceAccount(plugin: Pick<PluginEntry, 'name' | 'namespace'>): { namespace: string; name: string } {
  return { namespace: plugin.namespace, name: `${plugin.name}${EXECUTOR_PLUGIN_SUFFIX}` };
}

/** `http://localhost:<first containerPort>`: where the agent reaches a plugin inside the pod. */
export function pluginAddress(plugin: PluginEntry): string {
  return `http://localhost:${plugin.container.ports![0]!.containerPort}`;
}

export const tokenVolumeName = (plugin: string): string => `token-${plugin}`;
const saVolumeName = (plugin: string): string => `sa-${plugin}`;

/** Arguments of `plugflow agent` in the main container. */
export function agentArgs(workflow: AgentWorkflow, plugins: readonly PluginEntry[], opts: AgentPodOptions): string[] {
  const args = [
    'agent',
    '--workflow',
    workflow.metadata.name!,
    '--namespace',
    workflow.metadata.namespace!,
    '--workflow-uid',
    workflow.metadata.uid ?? '',
    '--token-dir',
    AGENT_TOKEN_DIR,
    '--health-port',
    String(opts.healthPort ?? DEFAULT_AGENT_HEALTH_PORT),
  ];
  if (opts.concurrency !== undefined) args.push('--concurrency', String(opts.concurrency));
  for (const p of plugins) args.push('--plugin', `${p.name}=${pluginAddress(p)}`);
  return args;
}

export function buildAgentPod(workflow: AgentWorkflow, plugins: readonly PluginEntry[], opts: AgentPodOptions): V1Pod {
  const wf = workflow.metadata;
  const subject = `${wf.namespace}/${wf.name}`;
  checkPlugins(subject, plugins, opts);
  const command = opts.command ?? ['plugflow'];
  const ownSecurity: V1SecurityContext = {
    runAsNonRoot: true,
    runAsUser: AGENT_UID,
    runAsGroup: AGENT_UID,
    allowPrivilegeEscalation: false,
    readOnlyRootFilesystem: true,
    capabilities: { drop: ['ALL'] },
  };
  const tokenMounts = (readOnly: boolean) =>
    plugins.map((p) => ({ name: tokenVolumeName(p.name), mountPath: `${AGENT_TOKEN_DIR}/${p.name}`, readOnly }));
  const healthPort = opts.healthPort ?? DEFAULT_AGENT_HEALTH_PORT;

  const main: V1Container = {
    name: AGENT_CONTAINER,
    image: opts.image,
    ...(opts.imagePullPolicy ? { imagePullPolicy: opts.imagePullPolicy } : {}),
    command,
    args: agentArgs(workflow, plugins, opts),
    env: Object.entries(opts.env ?? {}).map(([name, value]) => ({ name, value })),
    ports: [{ name: 'health', containerPort: healthPort }],
    livenessProbe: { httpGet: { path: '/healthz', port: healthPort }, periodSeconds: 10 },
    resources: opts.resources?.main ?? DEFAULT_MAIN_RESOURCES,
    securityContext: ownSecurity,
    volumeMounts: [...tokenMounts(true), { name: 'kube-api-access', mountPath: SERVICE_ACCOUNT_DIR, readOnly: true }],
  };

  const initContainers: V1Container[] =
    plugins.length === 0
      ? []
      : [
          {
            name: AGENT_INIT_CONTAINER,
            image: opts.image,
            ...(opts.imagePullPolicy ? { imagePullPolicy: opts.imagePullPolicy } : {}),
            command,
            args: ['agent', 'init', '--token-dir', AGENT_TOKEN_DIR, ...plugins.flatMap((p) => ['--plugin', p.name])],
            resources: opts.resources?.init ?? DEFAULT_INIT_RESOURCES,
            securityContext: ownSecurity,
            volumeMounts: tokenMounts(false),
          },
        ];

  const sidecars = plugins.map(sidecar);
  const podSecurity = {
    runAsNonRoot: true,
    runAsUser: AGENT_UID,
    runAsGroup: AGENT_UID,
    fsGroup: AGENT_UID,
    seccompProfile: { type: 'RuntimeDefault' },
  };
  // The floor of plugin sidecars at every pod security level (discovery refuses such plugins
  // already; this holds for any plugin that reaches here).
  const floor = sidecars.flatMap((c, i) =>
    checkPluginSidecar(c, podSecurity, `plugin ${plugins[i]!.namespace}/${plugins[i]!.name} container "${c.name}"`).map(
      (v) => `${v.field} ${v.problem} (fix: ${v.fix})`,
    ),
  );
  if (floor.length > 0) throw new AgentPodError(subject, floor);

  const volumes: V1Volume[] = [
    ...plugins.map((p) => ({ name: tokenVolumeName(p.name), emptyDir: { medium: 'Memory', sizeLimit: '1Mi' } })),
    {
      name: 'kube-api-access',
      projected: {
        defaultMode: 0o444,
        sources: [
          { serviceAccountToken: { path: 'token', expirationSeconds: 3607 } },
          { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
          { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
        ],
      },
    },
    ...plugins
      .filter((p) => p.automountServiceAccountToken)
      .map((p) => ({ name: saVolumeName(p.name), secret: { secretName: opts.pluginTokenSecrets![p.name]!, defaultMode: 0o440 } })),
  ];

  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: agentPodName(wf.name!),
      namespace: wf.namespace,
      labels: {
        [LABEL_WORKFLOW]: wf.name!,
        [LABEL_SHARD_BUCKET]: shardBucketLabel(wf.namespace!, wf.name!),
        [LABEL_COMPONENT]: AGENT_COMPONENT,
      },
      ownerReferences: [{ apiVersion: API_VERSION, kind: 'Workflow', name: wf.name!, uid: wf.uid!, controller: true }],
    },
    spec: {
      restartPolicy: 'Never',
      ...(opts.serviceAccountName ? { serviceAccountName: opts.serviceAccountName } : {}),
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      shareProcessNamespace: false,
      securityContext: podSecurity,
      initContainers,
      containers: [main, ...sidecars],
      volumes,
    },
  };
}

/** The plugin's container plus its token mount and hardening defaults it did not override. */
function sidecar(p: PluginEntry): V1Container {
  const c = p.container;
  const mounts = [{ name: tokenVolumeName(p.name), mountPath: TOKEN_DIR_IN_SIDECAR, readOnly: true }];
  if (p.automountServiceAccountToken) mounts.push({ name: saVolumeName(p.name), mountPath: SERVICE_ACCOUNT_DIR, readOnly: true });
  return {
    ...(c as V1Container),
    securityContext: {
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
      ...(c.securityContext as V1SecurityContext | undefined),
    },
    volumeMounts: mounts,
  };
}

function checkPlugins(subject: string, plugins: readonly PluginEntry[], opts: AgentPodOptions): void {
  const problems: string[] = [...portClashes(plugins)];
  const healthPort = opts.healthPort ?? DEFAULT_AGENT_HEALTH_PORT;
  const containerNames = new Map<string, string>();
  const pluginNames = new Set<string>();
  for (const p of plugins) {
    if (pluginNames.has(p.name)) problems.push(`plugin ${p.name} is listed twice (select plugins with pluginsForWorkflow)`);
    pluginNames.add(p.name);
    const cname = p.container.name ?? '';
    if (AGENT_RESERVED_CONTAINER_NAMES.includes(cname))
      problems.push(`plugin ${p.namespace}/${p.name} uses the reserved container name "${cname}"`);
    const prev = containerNames.get(cname);
    if (prev) problems.push(`plugins ${prev} and ${p.namespace}/${p.name} both name their container "${cname}"`);
    containerNames.set(cname, `${p.namespace}/${p.name}`);
    if (!p.container.ports?.length) problems.push(`plugin ${p.namespace}/${p.name} has no port`);
    if (p.container.ports?.some((port) => port.containerPort === healthPort)) {
      problems.push(`plugin ${p.namespace}/${p.name} listens on ${healthPort}, the agent's health port`);
    }
    if (p.automountServiceAccountToken && !opts.pluginTokenSecrets?.[p.name]) {
      const sa = pluginServiceAccount(p);
      problems.push(
        `plugin ${p.namespace}/${p.name} asks for a service account token: give pluginTokenSecrets["${p.name}"], ` +
          `a Secret in the workflow's namespace holding a token of service account ${sa.namespace}/${sa.name}`,
      );
    }
  }
  if (problems.length > 0) throw new AgentPodError(subject, problems);
}
