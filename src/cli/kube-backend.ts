/**
 * The kubeconfig path of `plugflow submit/list/get/delete`: Workflows are custom objects, so the
 * commands talk to the API server directly with the user's own credentials (RBAC decides). The
 * API server checks the CRD schema on create; the controller validates the rest when it first
 * sees the workflow and fails it at once with a message naming the field.
 */
import { CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { GROUP, PLURAL, VERSION, type Workflow } from '../api/index.js';
import { describeError } from '../kube/apply.js';
import type { ListOptions, WorkflowList } from './rest-client.js';
import type { BackendFlags, WorkflowBackend } from './workflow-backend.js';

export function loadKubeConfig(path?: string, context?: string): KubeConfig {
  const kc = new KubeConfig();
  if (path) kc.loadFromFile(path);
  else kc.loadFromDefault();
  if (context) kc.setCurrentContext(context);
  if (!kc.getCurrentCluster()) throw new Error('no cluster in the kubeconfig: pass --kubeconfig, set KUBECONFIG, or use --server');
  return kc;
}

async function call<T>(what: string, fn: () => Promise<unknown>): Promise<T> {
  try {
    return (await fn()) as T;
  } catch (err) {
    throw new Error(`${what}: ${describeError(err)}`);
  }
}

export function kubeBackend(flags: BackendFlags & { context?: string }): WorkflowBackend {
  const kc = loadKubeConfig(flags.kubeconfig, flags.context);
  const api = kc.makeApiClient(CustomObjectsApi);
  const base = { group: GROUP, version: VERSION, plural: PLURAL.workflow };
  return {
    where: kc.getCurrentCluster()!.server,
    create: (namespace, wf, dryRun) =>
      call<Workflow>(`creating Workflow in ${namespace}`, () =>
        api.createNamespacedCustomObject({
          ...base,
          namespace,
          body: { ...wf, apiVersion: `${GROUP}/${VERSION}`, kind: 'Workflow', metadata: { ...wf.metadata, namespace } },
          dryRun: dryRun ? 'All' : undefined,
        }),
      ),
    list: (namespace, o: ListOptions) =>
      call<WorkflowList>(`listing Workflows in ${namespace}`, () =>
        api.listNamespacedCustomObject({ ...base, namespace, labelSelector: o.labelSelector, fieldSelector: o.fieldSelector, limit: o.limit, _continue: o.continue }),
      ),
    get: (namespace, name) => call<Workflow>(`reading Workflow ${namespace}/${name}`, () => api.getNamespacedCustomObject({ ...base, namespace, name })),
    delete: async (namespace, name) => {
      await call(`deleting Workflow ${namespace}/${name}`, () => api.deleteNamespacedCustomObject({ ...base, namespace, name }));
    },
    close: async () => {},
  };
}
