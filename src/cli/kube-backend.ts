/**
 * The kubeconfig path of `plugflow submit/list/get/delete`: Workflows are custom objects, so the
 * commands talk to the API server directly with the user's own credentials (RBAC decides). The
 * API server checks the CRD schema on create; the controller validates the rest when it first
 * sees the workflow and fails it at once with a message naming the field.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { API_VERSION, DEFAULT_INSTALL_NAMESPACE, inflateWorkflow, type Workflow } from '../api/index.js';
import { KubeClient } from '../kube/client.js';
import { loadKubeConfig as loadConfig } from '../kube/kubeconfig.js';
import { WORKFLOWS } from '../kube/resource.js';
import { errorMessage } from '../log/error-message.js';
import {
  changeRunningWorkflow,
  OperationRefused,
  resubmitWorkflow,
  resumeRunningWorkflow,
  retryFailedWorkflow,
} from '../operations/index.js';
import type { ListOptions, WorkflowList } from './rest-client.js';
import type { BackendFlags, WorkflowBackend } from './workflow-backend.js';
import { openNodeArtifact } from '../operations/index.js';

/** The user's kubeconfig; an error naming the flags when it has no cluster. */
export function loadKubeConfig(path?: string, context?: string): KubeConfig {
  const kc = loadConfig(path, context);
  if (!kc.getCurrentCluster()) throw new Error('no cluster in the kubeconfig: pass --kubeconfig, set KUBECONFIG, or use --server');
  return kc;
}

/** A KubeClient for a CLI command (one per command; closed when it is done). */
export function cliClient(kc: KubeConfig): Promise<KubeClient> {
  return KubeClient.fromKubeConfig(kc, { userAgent: 'plugflow-cli' });
}

async function call<T>(what: string, fn: () => Promise<unknown>): Promise<T> {
  try {
    return (await fn()) as T;
  } catch (err) {
    throw new Error(`${what}: ${errorMessage(err)}`);
  }
}

export function kubeBackend(flags: BackendFlags & { context?: string }): WorkflowBackend {
  const kc = loadKubeConfig(flags.kubeconfig, flags.context);
  let client: Promise<KubeClient> | undefined;
  const kube = () => (client ??= cliClient(kc));
  return {
    where: kc.getCurrentCluster()!.server,
    create: (namespace, wf, dryRun) =>
      call<Workflow>(`creating Workflow in ${namespace}`, async () =>
        (await kube()).create(
          WORKFLOWS,
          namespace,
          { ...wf, apiVersion: API_VERSION, kind: 'Workflow', metadata: { ...wf.metadata, namespace } },
          { dryRun },
        ),
      ),
    list: (namespace, o: ListOptions) =>
      call<WorkflowList>(`listing Workflows in ${namespace}`, async () => {
        const list = await (
          await kube()
        ).list<Workflow>(WORKFLOWS, {
          namespace,
          labelSelector: o.labelSelector,
          fieldSelector: o.fieldSelector,
          limit: o.limit,
          continue: o.continue,
        });
        return { ...list, items: list.items.map((wf) => inflateWorkflow(wf)) };
      }),
    get: (namespace, name) =>
      call<Workflow>(`reading Workflow ${namespace}/${name}`, async () =>
        inflateWorkflow(await (await kube()).get<Workflow>(WORKFLOWS, namespace, name)),
      ),
    delete: async (namespace, name) => {
      await call(`deleting Workflow ${namespace}/${name}`, async () => (await kube()).delete(WORKFLOWS, namespace, name));
    },
    operate: async (namespace, name, op) => {
      const k = await kube();
      // OperationRefused says what and why itself; the API server's errors get the context.
      const run = (): Promise<Workflow> => {
        switch (op.kind) {
          case 'resume':
            return resumeRunningWorkflow(k, namespace, name, op).then((r) => r.workflow);
          case 'resubmit':
            return resubmitWorkflow(k, namespace, name, op);
          case 'retry':
            return retryFailedWorkflow(k, namespace, name, op).then((r) => r.workflow);
          default:
            return changeRunningWorkflow(k, namespace, name, op.kind);
        }
      };
      return run().catch((err: unknown) => {
        throw err instanceof OperationRefused ? err : new Error(`${op.kind} Workflow ${namespace}/${name}: ${errorMessage(err)}`);
      });
    },
    openArtifact: async (namespace, name, nodeId, artifact) =>
      openNodeArtifact(await kube(), namespace, name, nodeId, artifact, {
        installNamespace: process.env.PLUGFLOW_NAMESPACE || DEFAULT_INSTALL_NAMESPACE,
      }).catch((err: unknown) => {
        throw err instanceof OperationRefused ? err : new Error(`artifact "${artifact}" of ${namespace}/${name}: ${errorMessage(err)}`);
      }),
    close: async () => {
      if (client) await (await client.catch(() => undefined))?.close();
    },
  };
}
