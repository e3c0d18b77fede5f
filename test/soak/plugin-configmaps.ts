/**
 * The soak's plugin ConfigMaps, built with src/plugins' buildPlugin exactly as `plugflow plugin
 * build` would. The sidecar command runs the plugin's TypeScript file through tsx with absolute
 * paths: the local runner ignores images, starts the command on the host, and shows every
 * container this package (wherever the checkout is) at CLI_DIR.
 *
 * Each plugin namespace ("lane") gets its own ports. The local runner gives containers no
 * network namespace, so two agent pods cannot run at once on it: both declare the agent's
 * health port (9766) and their plugins' ports, and the runner holds the second Pending until
 * the first has gone (a real node gives every pod its own loopback). The soak runs one plugin
 * workflow at a time per lane, and one lane by default.
 */
import { join } from 'node:path';
import type { ExecutorPlugin } from '../../src/api/index.js';
import { buildPlugin, type PluginConfigMap } from '../../src/plugins/index.js';
import { CLI_DIR } from '../../src/runner/shim.js';
import { FLAKY } from './plugins/flaky.js';
import { INSTANT } from './plugins/instant.js';
import { REQUEUE } from './plugins/requeue.js';

export const SOAK_PLUGINS = [
  { name: INSTANT, file: 'instant.ts', description: 'answers at once (Succeeded, or Failed on request)' },
  { name: REQUEUE, file: 'requeue.ts', description: 'answers Running with a requeue until polled N times' },
  { name: FLAKY, file: 'flaky.ts', description: 'answers 503, then drops the connection, then succeeds' },
] as const;

export function soakPluginConfigMaps(namespace: string, basePort: number): PluginConfigMap[] {
  const tsx = join(CLI_DIR, 'node_modules', 'tsx', 'dist', 'esm', 'index.mjs');
  return SOAK_PLUGINS.map((p, i) => {
    const port = basePort + i;
    const plugin: ExecutorPlugin = {
      apiVersion: 'plugflow.io/v1alpha1',
      kind: 'ExecutorPlugin',
      metadata: { name: p.name, namespace, annotations: { 'workflows.plugflow.io/description': p.description } },
      spec: {
        sidecar: {
          container: {
            name: p.name,
            image: 'plugflow:latest',
            command: [process.execPath, '--import', tsx, join(CLI_DIR, 'test', 'soak', 'plugins', p.file)],
            workingDir: CLI_DIR,
            ports: [{ containerPort: port }],
            env: [{ name: 'PLUGIN_PORT', value: String(port) }],
            resources: { requests: { cpu: '50m', memory: '96Mi' }, limits: { cpu: '500m', memory: '256Mi' } },
            // tsx keeps a transform cache under /tmp (private per container on the runner)
            securityContext: { runAsNonRoot: true, runAsUser: 65534, readOnlyRootFilesystem: false },
          },
        },
      },
    };
    return buildPlugin(plugin).configMap;
  });
}
