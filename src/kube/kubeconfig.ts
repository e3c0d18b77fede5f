/**
 * The one way plugflow's commands find their Kubernetes credentials: client-node's KubeConfig
 * loader (a kubeconfig file, else $KUBECONFIG, ~/.kube/config or the in-cluster service
 * account), optionally switched to another context. Requests then go through src/kube/client.ts.
 */
import { KubeConfig } from '@kubernetes/client-node';

/** `source`: a loaded KubeConfig (returned as is, context aside), a kubeconfig path, or undefined for the default. */
export function loadKubeConfig(source?: KubeConfig | string, context?: string): KubeConfig {
  let kc: KubeConfig;
  if (source instanceof KubeConfig) kc = source;
  else {
    kc = new KubeConfig();
    if (source) kc.loadFromFile(source);
    else kc.loadFromDefault();
  }
  if (context) kc.setCurrentContext(context);
  return kc;
}

/** A kubeconfig (YAML text) for the API server at `server` (CA: base64 PEM) that authenticates with a bearer token. */
export function tokenKubeconfig(server: string, caData: string, token: string, user = 'user'): string {
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    '- name: plugflow',
    '  cluster:',
    `    server: ${server}`,
    `    certificate-authority-data: ${caData}`,
    'users:',
    `- name: ${user}`,
    '  user:',
    `    token: ${token}`,
    'contexts:',
    '- name: plugflow',
    '  context:',
    '    cluster: plugflow',
    `    user: ${user}`,
    'current-context: plugflow',
    '',
  ].join('\n');
}
