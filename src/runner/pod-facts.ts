/** What the runner reads off a pod and its kubeconfig: whether it ran before, its ports, the service variables for in-cluster clients. */
import type { KubeConfig, V1Pod } from '@kubernetes/client-node';

/** Whether a pod's containers were started before (by an earlier runner process). */
export function startedBefore(pod: V1Pod): boolean {
  const all = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])];
  return pod.status?.phase === 'Running' || all.some((s) => s.state?.running || s.state?.terminated);
}

/** KUBERNETES_SERVICE_HOST/PORT pointing at the runner's API server, so in-cluster clients work. */
export function serviceEnvFor(kc: KubeConfig): Record<string, string> {
  const server = kc.getCurrentCluster()?.server;
  if (!server) return {};
  const url = new URL(server);
  if (url.protocol !== 'https:') return {};
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const port = url.port || '443';
  return {
    KUBERNETES_SERVICE_HOST: host,
    KUBERNETES_SERVICE_PORT: port,
    KUBERNETES_SERVICE_PORT_HTTPS: port,
    KUBERNETES_PORT: `tcp://${url.host}`,
  };
}

/** The container ports a pod declares (init containers included). */
export function podPorts(pod: V1Pod): Set<number> {
  const spec = pod.spec;
  const ports = new Set<number>();
  for (const c of [...(spec?.initContainers ?? []), ...(spec?.containers ?? [])]) for (const p of c.ports ?? []) ports.add(p.containerPort);
  return ports;
}
