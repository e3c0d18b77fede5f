/**
 * `plugflow executor gc`: the artifact GC pod's one container. Deletes every location of its plan
 * (PLUGFLOW_GC_ARTIFACTS) with the credentials its environment holds (from the Secrets the
 * artifacts name), or through its artifact driver (a sidecar of the pod, plugin-driver.ts) and writes `{deleted, errors}` to its termination message, where the controller
 * reads it. Like a step pod, it makes no Kubernetes API call.
 */
import { writeFileSync } from 'node:fs';
import { parseUserJson } from '../api/index.js';
import type { StoredLocation } from '../artifacts/plan.js';
import { pluginRootFromEnv, type PluginLocation } from '../artifacts/plugin-driver.js';
import { ENV_GC_ARTIFACTS } from '../pods/layout.js';

function isPlugin(loc: StoredLocation | PluginLocation): loc is PluginLocation {
  return (loc as PluginLocation).kind === 'plugin';
}

export interface GCReport {
  deleted: number;
  errors: string[];
}

export async function runArtifactGC(terminationLog: string, env: NodeJS.ProcessEnv = process.env): Promise<GCReport> {
  const text = env[ENV_GC_ARTIFACTS];
  const stores = text ? parseUserJson(text, ENV_GC_ARTIFACTS) : [];
  if (!Array.isArray(stores)) throw new Error(`${ENV_GC_ARTIFACTS} must be a JSON list of locations`);
  const { credentialsFromEnv, deleteStored } = await import('../artifacts/store.js');
  const report: GCReport = { deleted: 0, errors: [] };
  const plugins = (stores as Array<StoredLocation | PluginLocation>).some(isPlugin);
  const drivers = plugins ? new (await import('../artifacts/plugin-driver.js')).DriverPool(pluginRootFromEnv(env)) : undefined;
  try {
    for (const loc of stores as Array<StoredLocation | PluginLocation>) {
      try {
        if (isPlugin(loc)) {
          await (await drivers!.get(loc)).delete(loc, loc.key);
          report.deleted += 1;
        } else report.deleted += await deleteStored(loc, credentialsFromEnv(loc, env));
      } catch (err) {
        report.errors.push((err as Error).message);
      }
    }
  } finally {
    await drivers?.close();
  }
  // The kubelet keeps 4096 bytes: the first errors, and how many there were.
  let json = JSON.stringify(report);
  while (json.length > 4000 && report.errors.length > 1) {
    report.errors.pop();
    json = JSON.stringify({ ...report, errors: [...report.errors, `…and more`] });
  }
  writeFileSync(terminationLog, json);
  return report;
}
