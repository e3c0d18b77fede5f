/**
 * The installed controller's settings (manifests/base/controller.yaml), so that a plugflow
 * controller the benches start on the host runs as it does in a cluster.
 */
import { join } from 'node:path';
import { REPO_ROOT } from '../../src/devenv/dev-stack.js';
import { readManifests } from '../../src/kube/apply.js';

/** The controller container's environment: the variables with a literal value (not valueFrom). */
export function installedControllerEnv(): Record<string, string> {
  const docs = readManifests(join(REPO_ROOT, 'manifests', 'base', 'controller.yaml')) as {
    kind?: string;
    spec?: { template?: { spec?: { containers?: { name: string; env?: { name: string; value?: string }[] }[] } } };
  }[];
  const container = docs.find((d) => d.kind === 'Deployment')?.spec?.template?.spec?.containers?.find((c) => c.name === 'controller');
  return Object.fromEntries((container?.env ?? []).flatMap((e) => (e.value === undefined ? [] : [[e.name, e.value]])));
}

/** NODE_OPTIONS of the installed controller: plugflow is measured with the V8 settings it runs with in a cluster. */
export function installedNodeOptions(): Record<string, string> {
  const value = installedControllerEnv().NODE_OPTIONS;
  return value ? { NODE_OPTIONS: value } : {};
}

/** Node.js flags that write a CPU profile into $PEER_CPU_PROF (none when it is unset). */
export const cpuProfArgs = (): string[] => (process.env.PEER_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.PEER_CPU_PROF}`] : []);
