/**
 * The init container's artifact work: fetch every input artifact of the plan
 * (PLUGFLOW_INPUT_ARTIFACTS) into VAR_DIR/inputs/<name>, unpacked, with its mode. The main
 * container mounts that at the artifact's path. Any failure stops the init container with a
 * message naming the artifact and the location, so the step fails before its command runs.
 * Artifacts of a driver plugin are loaded by the driver's container (plugin-driver.ts).
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseUserJson } from '../api/index.js';
import type { InputArtifactPlan } from '../artifacts/plan.js';
import type { DriverPool } from '../artifacts/plugin-driver.js';
import type * as Unpack from '../artifacts/unpack.js';
import { ENV_INPUT_ARTIFACTS, INPUT_ARTIFACTS_DIR } from '../pods/layout.js';

export function inputPlansFromEnv(env: NodeJS.ProcessEnv = process.env): InputArtifactPlan[] {
  const text = env[ENV_INPUT_ARTIFACTS];
  if (!text) return [];
  const data = parseUserJson(text, ENV_INPUT_ARTIFACTS);
  if (!Array.isArray(data) || !data.every((p) => typeof p?.name === 'string' && /^[^/\\]+$/.test(p.name) && p.name !== '..' && p.source))
    throw new Error(`${ENV_INPUT_ARTIFACTS} must be a JSON list of {name, path, source}`);
  return data as InputArtifactPlan[];
}

/** Fetches every input; returns one line per artifact for the container's log. */
export async function fetchInputs(dir: string, plans: InputArtifactPlan[], env: NodeJS.ProcessEnv = process.env): Promise<string[]> {
  if (plans.length === 0) return [];
  const root = join(dir, INPUT_ARTIFACTS_DIR);
  mkdirSync(root, { recursive: true, mode: 0o755 });
  const { placeArtifact } = await import('../artifacts/unpack.js');
  const lines: string[] = [];
  const drivers = plans.some((p) => 'plugin' in p.source) ? await newDriverPool(env) : undefined;
  try {
    for (const p of plans) lines.push(...(await fetchOne(root, p, env, drivers, placeArtifact)));
  } finally {
    await drivers?.close();
  }
  return lines;
}

async function newDriverPool(env: NodeJS.ProcessEnv) {
  const { DriverPool, pluginRootFromEnv } = await import('../artifacts/plugin-driver.js');
  return new DriverPool(pluginRootFromEnv(env));
}

/** Fetches and places one input; its log lines. */
async function fetchOne(
  root: string,
  p: InputArtifactPlan,
  env: NodeJS.ProcessEnv,
  drivers: DriverPool | undefined,
  placeArtifact: typeof Unpack.placeArtifact,
): Promise<string[]> {
  const lines: string[] = [];
  const what = `input artifact "${p.name}"`;
  const fetched = join(root, `.${p.name}.download`);
  const t0 = Date.now();
  try {
    if ('raw' in p.source) {
      writeFileSync(fetched, p.source.raw, { mode: 0o644 });
    } else if ('git' in p.source) {
      const { cloneGit } = await import('../artifacts/git.js');
      const { commit } = await cloneGit(p.source.git, fetched, env);
      lines.push(`cloned ${what} at commit ${commit}`);
    } else if ('http' in p.source) {
      const { downloadHttp } = await import('../artifacts/http.js');
      await downloadHttp(p.source.http, fetched, env);
    } else if ('plugin' in p.source) {
      const driver = await drivers!.get(p.source.plugin);
      await driver.load(p.source.plugin, { name: p.name, path: p.path, ...(p.mode !== undefined ? { mode: p.mode } : {}) }, fetched);
      lines.push(`loaded ${what} through artifact driver "${p.source.plugin.name}"`);
    } else {
      const { credentialsFromEnv, downloadStored } = await import('../artifacts/store.js');
      await downloadStored(p.source.store, credentialsFromEnv(p.source.store, env), fetched);
    }
    await placeArtifact(fetched, join(root, p.name), what, {
      ...(p.subPath ? { subPath: p.subPath } : {}),
      ...(p.archive ? { archive: p.archive } : {}),
      ...(p.mode !== undefined ? { mode: p.mode } : {}),
      ...(p.recurseMode ? { recurseMode: true } : {}),
    });
  } catch (err) {
    rmSync(fetched, { recursive: true, force: true });
    const msg = (err as Error).message;
    throw new Error(msg.startsWith(what) ? msg : `${what}: ${msg}`);
  }
  rmSync(fetched, { recursive: true, force: true });
  lines.push(`fetched ${what} for ${p.path} in ${Date.now() - t0} ms`);
  return lines;
}
