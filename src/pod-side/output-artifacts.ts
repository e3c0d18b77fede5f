/**
 * The wait container's artifact work: once the main container is done, upload what the emissary
 * packed into VAR_DIR/artifacts/<name> to each output's planned location (PLUGFLOW_OUTPUT_ARTIFACTS).
 * An artifact the emissary could not pack (NAME.error) is skipped when optional and otherwise
 * fails the step with the emissary's reason. Returns the names uploaded (for the report).
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseUserJson } from '../api/index.js';
import type { OutputArtifactPlan } from '../artifacts/plan.js';
import { ENV_OUTPUT_ARTIFACTS, PACKED_ARTIFACTS_DIR } from '../pods/layout.js';

export function outputPlansFromEnv(env: NodeJS.ProcessEnv = process.env): OutputArtifactPlan[] {
  const text = env[ENV_OUTPUT_ARTIFACTS];
  if (!text) return [];
  const data = parseUserJson(text, ENV_OUTPUT_ARTIFACTS);
  if (!Array.isArray(data) || !data.every((p) => typeof p?.name === 'string' && /^[^/\\]+$/.test(p.name) && p.store))
    throw new Error(`${ENV_OUTPUT_ARTIFACTS} must be a JSON list of {name, store, record}`);
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
  const { credentialsFromEnv, describeStored: describe, uploadStored: uploadFile, uploadTree } = await import('../artifacts/store.js');
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
      const creds = credentialsFromEnv(p.store, env);
      if (statSync(packed).isDirectory()) {
        // archive: none of a directory: one object per file under the key.
        const { files, size } = await uploadTree(p.store, creds, packed);
        out.log.push(`uploaded ${what} to ${describe(p.store)}/: ${files} files, ${size} bytes, ${Date.now() - t0} ms`);
      } else {
        const { size, sha256 } = await uploadFile(p.store, creds, packed);
        out.log.push(`uploaded ${what} to ${describe(p.store)}: ${size} bytes, sha256 ${sha256}, ${Date.now() - t0} ms`);
      }
      out.uploaded.push(p.name);
    } catch (err) {
      out.errors.push(`${what}: ${(err as Error).message}`);
    }
  }
  return out;
}
