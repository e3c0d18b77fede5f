/**
 * What the controller checks before it creates a pod (the decisions are pure, in
 * src/pods/pod-policy.ts; this shell only looks up what they need): the namespace's pod
 * security level, from the namespace informer's labels (a namespace not cached yet is read),
 * and that the agent's service account exists.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { KubeClient } from '../kube/client.js';
import { isNotFound } from '../kube/errors.js';
import { NAMESPACES, SERVICE_ACCOUNTS } from '../kube/resource.js';
import { podPolicyRefusal, type PodSecurityLevel, type PolicyViolation } from '../pods/pod-policy.js';
import { namespaceLevel } from '../pods/pod-security-level.js';
import type { ControllerCaches } from './caches.js';

export class PodAdmission {
  constructor(
    private readonly client: KubeClient,
    private readonly caches: ControllerCaches,
    private readonly controllerLevel: PodSecurityLevel,
  ) {}

  /** The policy's verdict on a pod about to be created: undefined to create it, else the message its steps fail with. */
  async refusal(namespace: string, subject: string, pod: V1Pod, extra: readonly PolicyViolation[]): Promise<string | undefined> {
    const cached = this.caches.namespaces.get(undefined, namespace);
    const labels = cached
      ? cached.metadata?.labels
      : (await this.client.get<{ metadata?: { labels?: Record<string, string> } }>(NAMESPACES, undefined, namespace)).metadata?.labels;
    const { level, source } = namespaceLevel(labels, this.controllerLevel);
    return podPolicyRefusal(subject, pod, level, source, extra);
  }

  /** A missing agent account fails the plugin and http steps with the two commands that create it. */
  async requireAgentAccount(namespace: string, name: string): Promise<void> {
    try {
      await this.client.get(SERVICE_ACCOUNTS, namespace, name);
    } catch (err) {
      if (!isNotFound(err)) throw err;
      throw new Error(
        `service account ${namespace}/${name}, which the agent runs as, does not exist; create it and give it the agent's role: ` +
          `kubectl create serviceaccount ${name} -n ${namespace} && ` +
          `kubectl create rolebinding ${name} -n ${namespace} --clusterrole=plugflow-agent --serviceaccount=${namespace}:${name}`,
      );
    }
  }
}
