/**
 * A pod of a workflow, read with the caller's token: the log and events endpoints show only pods
 * labelled with the workflow they are asked about, not any pod of the namespace.
 */
import { LABEL_WORKFLOW } from '../../api/index.js';
import type { KubeClient } from '../../kube/client.js';
import { PODS } from '../../kube/resource.js';
import { notFound } from '../errors.js';

export async function requireWorkflowPod(asCaller: KubeClient, namespace: string, workflow: string, podName: string): Promise<void> {
  const pod = await asCaller.get<{ metadata?: { labels?: Record<string, string> } }>(PODS, namespace, podName);
  if (pod.metadata?.labels?.[LABEL_WORKFLOW] !== workflow)
    throw notFound(`pod ${namespace}/${podName} is not a pod of workflow ${workflow}`);
}
