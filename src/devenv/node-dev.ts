/**
 * `plugflow dev --node=kubelet`: plugflow installed on a real three-node cluster of this machine the
 * way a cluster user installs it — `kubectl apply` of manifests/install.yaml with the image
 * `make image` built, the controller and the server running as Deployments, executor plugins
 * turned on with `kubectl set env` — instead of the in-process controller and server on the local
 * pod runner. Needs root and the node's packages; where the node cannot start it says why.
 */
import { join } from 'node:path';
import { impersonationBinding, REPO_ROOT } from './dev-stack.js';
import { NodeCluster, nodeUnavailableReason } from './node-cluster.js';

export const INSTALL_NAMESPACE = 'plugflow';

export interface NodeDevOptions {
  /** Executor plugins on (WORKFLOW_EXECUTOR_PLUGINS=true on the controller's Deployment). */
  plugins: boolean;
  /** Plugin ConfigMap files to apply in the install namespace. */
  pluginConfigMaps: string[];
  /** Namespaces that get the agent's service account (README "Install into a cluster"). */
  workflowNamespaces: string[];
  progress: (line: string) => void;
}

/** Starts the node and installs plugflow on it; on a failure the node is stopped again. */
export async function startNodeDev(opts: NodeDevOptions): Promise<NodeCluster> {
  const reason = await nodeUnavailableReason();
  if (reason) throw new Error(`--node=kubelet: ${reason}; without --node, plugflow dev uses the local pod runner`);
  const node = new NodeCluster();
  await node.start();
  try {
    const timed = async (what: string, f: () => Promise<unknown>) => {
      const t0 = Date.now();
      await f();
      opts.progress(`${what} (${((Date.now() - t0) / 1000).toFixed(1)}s)`);
    };
    const k = (args: string[]) => node.kubectl(args);
    await timed('kubectl apply --server-side -f manifests/install.yaml', () =>
      k(['apply', '--server-side', '-f', join(REPO_ROOT, 'manifests/install.yaml')]),
    );
    if (opts.plugins) {
      await timed('WORKFLOW_EXECUTOR_PLUGINS=true set on deploy/plugflow-controller', () =>
        k(['-n', INSTALL_NAMESPACE, 'set', 'env', 'deploy/plugflow-controller', 'WORKFLOW_EXECUTOR_PLUGINS=true']),
      );
    }
    for (const d of ['plugflow-controller', 'plugflow-server']) {
      await timed(`deploy/${d} rolled out`, () =>
        k(['-n', INSTALL_NAMESPACE, 'rollout', 'status', `deploy/${d}`, '--timeout=180s']).catch(async (err: Error) => {
          throw new Error(`deploy/${d} did not roll out: ${err.message}\n${await node.snapshot()}`);
        }),
      );
    }
    for (const ns of opts.workflowNamespaces) {
      await timed(`namespace ${ns} has the agent's service account and role binding`, () =>
        node.kubectl(['apply', '-f', '-'], JSON.stringify(agentAccess(ns))),
      );
    }
    for (const file of opts.pluginConfigMaps) {
      await timed(`plugin ${file} applied`, () => k(['apply', '-n', INSTALL_NAMESPACE, '-f', file]));
    }
    if (opts.plugins && opts.pluginConfigMaps.length > 0) {
      await timed('"Executor plugin added" in the controller log', () =>
        node.waitFor(
          '"Executor plugin added" in the controller log',
          async () =>
            (await k(['-n', INSTALL_NAMESPACE, 'logs', 'deploy/plugflow-controller']).catch(() => '')).includes('Executor plugin added')
              ? true
              : undefined,
          60_000,
        ),
      );
    }
    return node;
  } catch (err) {
    await node.stop().catch(() => undefined);
    throw err;
  }
}

/**
 * What the README's install section has people create in each namespace that runs plugin steps:
 * the namespace, the agent's own service account and its binding to the `plugflow-agent` role,
 * and the binding that lets the controller act as the namespace's service accounts.
 * Applied (not created) so that running it again, or on a namespace that has them, changes nothing.
 */
function agentAccess(ns: string): Record<string, unknown> {
  const items: Record<string, unknown>[] = [
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'plugflow-agent', namespace: ns } },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'plugflow-agent', namespace: ns },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'plugflow-agent' },
      subjects: [{ kind: 'ServiceAccount', name: 'plugflow-agent', namespace: ns }],
    },
    // The controller may act as this namespace's accounts (resource templates, image lookups).
    { ...impersonationBinding(ns) },
  ];
  if (ns !== 'default') items.unshift({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  return { apiVersion: 'v1', kind: 'List', items };
}
