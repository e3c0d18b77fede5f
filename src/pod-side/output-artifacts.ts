/**
 * The wait container's artifact work: once the main container is done, upload what the emissary
 * packed into VAR_DIR/artifacts/<name> to each output's planned location (PLUGFLOW_OUTPUT_ARTIFACTS):
 * a store, an http URL (PUT), or an artifact driver plugin (its container beside this one).
 * An artifact the emissary could not pack (NAME.error) is skipped when optional and otherwise
 * fails the step with the emissary's reason. Returns the names uploaded (for the report).
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseUserJson } from '../api/index.js';
import type { OutputArtifactPlan } from '../artifacts/plan.js';
import type { DriverPool } from '../artifacts/plugin-driver.js';
import { ENV_OUTPUT_ARTIFACTS, PACKED_ARTIFACTS_DIR } from '../pods/layout.js';

export function outputPlansFromEnv(env: NodeJS.ProcessEnv = process.env): OutputArtifactPlan[] {
  const text = env[ENV_OUTPUT_ARTIFACTS];
  if (!text) return [];
  const data = parseUserJson(text, ENV_OUTPUT_ARTIFACTS);
  if (
    !Array.isArray(data) ||
    !data.every((p) => typeof p?.name === 'string' && /^[^/\\]+$/.test(p.name) && (p.store || p.http || p.plugin) && p.record)
  )
    throw new Error(`${ENV_OUTPUT_ARTIFACTS} must be a JSON list of {name, store, http or plugin, record}`);
  return data as OutputArtifactPlan[];
}

export interface UploadOutcome {
  uploaded: string[];
  /** Why a required artifact was not uploaded; the step fails with it. */
  errors: string[];
  log: string[];
}

export async function uploadOutputs(
  dir: string,
  plans: OutputArtifactPlan[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<UploadOutcome> {
  const out: UploadOutcome = { uploaded: [], errors: [], log: [] };
  if (plans.length === 0) return out;
  let drivers: DriverPool | undefined;
  if (plans.some((p) => p.plugin)) {
    const { DriverPool: Pool, pluginRootFromEnv } = await import('../artifacts/plugin-driver.js');
    drivers = new Pool(pluginRootFromEnv(env));
  }
  try {
    for (const p of plans) {
      const what = `output artifact "${p.name}"`;
      const packed = join(dir, PACKED_ARTIFACTS_DIR, p.name);
      if (!existsSync(packed)) {
        const errFile = `${packed}.error`;
        const why = existsSync(errFile) ? readFileSync(errFile, 'utf8').trim() : 'the main container did not pack it';
        if (p.optional) out.log.push(`skipped optional ${what}: ${why}`);
        else out.errors.push(`${what} (path ${p.record.path ?? '?'}): ${why}`);
        continue;
      }
      try {
        const t0 = Date.now();
        const done = await uploadOne(p, packed, env, drivers);
        out.log.push(`uploaded ${what} to ${done}, ${Date.now() - t0} ms`);
        out.uploaded.push(p.name);
      } catch (err) {
        out.errors.push(`${what}: ${(err as Error).message}`);
      }
    }
  } finally {
    await drivers?.close();
  }
  return out;
}

/** Uploads one packed artifact where its plan says; what to log (where, size, checksum). */
async function uploadOne(p: OutputArtifactPlan, packed: string, env: NodeJS.ProcessEnv, drivers?: DriverPool): Promise<string> {
  const sum = (r: { size: number; sha256?: string }) => `${r.size} bytes${r.sha256 ? `, sha256 ${r.sha256}` : ''}`;
  if (p.plugin && drivers) {
    const driver = await drivers.get(p.plugin);
    const how = await driver.save(p.plugin, { name: p.name, ...(p.record.path ? { path: p.record.path } : {}) }, packed);
    const st = statSync(packed);
    return `artifact driver "${p.plugin.name}" key ${p.plugin.key} (${how === 'stream' ? 'SaveStream' : 'Save'}): ${st.isFile() ? `${st.size} bytes` : 'a directory'}`;
  }
  if (p.http) {
    const { uploadHttp } = await import('../artifacts/http.js');
    return `${redactedUrl(p.http.url)}: ${sum(await uploadHttp(p.http, packed, env))}`;
  }
  if (!p.store) throw new Error('its plan names no location');
  const { credentialsFromEnv, describeStored: describe, uploadStored, uploadTree } = await import('../artifacts/store.js');
  const creds = credentialsFromEnv(p.store, env);
  if (statSync(packed).isDirectory()) {
    // archive: none of a directory: one object per file under the key.
    const { files, size } = await uploadTree(p.store, creds, packed);
    return `${describe(p.store)}/: ${files} files, ${size} bytes`;
  }
  return `${describe(p.store)}: ${sum(await uploadStored(p.store, creds, packed))}`;
}

/** A URL for the log: no user information, no query string (it may hold tokens). */
function redactedUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.origin}${u.pathname}${u.search ? '?…' : ''}`;
  } catch {
    return 'the artifact URL';
  }
}
