/**
 * One real control plane per `vitest run` of the kube project: built (or reused from the cache)
 * and started here, shared by every Kubernetes-facing suite through `inject('cluster')`. Each
 * suite works in its own namespace. The CRDs from crds/ are applied before any suite starts.
 */
import { tmpdir } from 'node:os';
import type { TestProject } from 'vitest/node';
import { ControlPlane } from '../src/devenv/control-plane.js';
import { reapLeftovers } from '../src/devenv/leftovers.js';
import { applyCrds } from './support/apply.js';
import type { ClusterInfo } from './support/cluster.js';

let plane: ControlPlane | undefined;

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const t0 = Date.now();
  // Control planes of earlier runs that were killed (their processes, their temp directories).
  for (const line of await reapLeftovers(tmpdir(), 'plugflow-cp-')) console.log(`[global-setup] ${line}`);
  plane = new ControlPlane({ log: (line) => console.log(line) });
  try {
    await plane.start();
    await applyCrds(plane.kubeconfigPath);
  } catch (err) {
    await plane.stop().catch(() => {});
    throw err;
  }
  console.log(`[global-setup] control plane up and CRDs established in ${((Date.now() - t0) / 1000).toFixed(1)}s`);
  const info: ClusterInfo = {
    kubeconfigPath: plane.kubeconfigPath,
    apiServerUrl: plane.apiServerUrl,
    adminToken: plane.adminToken,
    userTokens: plane.userTokens,
    dir: plane.dir,
  };
  project.provide('cluster', info);
  return async () => {
    await plane?.stop();
  };
}

declare module 'vitest' {
  export interface ProvidedContext {
    cluster: ClusterInfo;
  }
}
