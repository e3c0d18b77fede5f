import { KubeConfig } from '@kubernetes/client-node';
import { readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { applyAndWait, readManifests } from '../../src/kube/apply.js';

export const REPO_ROOT = resolve(import.meta.dirname, '..', '..');

/** Applies every CRD in crds/ and the policy guarding Workflow status, and waits until all are established. */
export async function applyCrds(kubeconfigPath: string): Promise<void> {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfigPath);
  const dir = join(REPO_ROOT, 'crds');
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .sort();
  await applyAndWait(kc, [
    ...files.flatMap((f) => readManifests(join(dir, f))),
    ...readManifests(join(REPO_ROOT, 'manifests', 'base', 'workflow-status-policy.yaml')),
  ]);
}
