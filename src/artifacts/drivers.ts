/**
 * The artifact driver plugins an operator registers with the controller (the peer's
 * `artifactDrivers` of its controller ConfigMap): PLUGFLOW_ARTIFACT_DRIVERS on the controller, a
 * YAML or JSON list of
 *
 *   - name: my-store                        # what workflows name in `plugin.name`
 *     image: registry.example.com/my-store:v1
 *     connectionTimeoutSeconds: 5           # optional (5): how long its socket may take to answer
 *     command: [/bin/my-store]              # optional, plugflow's: the entrypoint, when the image's is not it
 *
 * A step that uses a driver gets its container (pods/artifact-drivers.ts); a workflow naming a
 * driver not listed here is refused when it starts, naming the field. Only the operator decides
 * which images run beside steps: a workflow can name a driver, never an image.
 */
import { readYamlDocument } from '../yaml/kube-yaml.js';

export const ENV_ARTIFACT_DRIVERS = 'PLUGFLOW_ARTIFACT_DRIVERS';

export interface ArtifactDriver {
  name: string;
  image: string;
  connectionTimeoutSeconds?: number;
  /** The driver's entrypoint; without it the image's ENTRYPOINT runs (with the socket path as its one argument). */
  command?: string[];
}

export class ArtifactDriverConfigError extends Error {}

/** A driver name: a DNS label short enough for the container `artifact-plugin-<name>`. */
const NAME = /^[a-z0-9]([-a-z0-9]{0,45}[a-z0-9])?$/;

/** Parses the list; errors name the entry and the field. */
export function parseArtifactDrivers(text: string, where = ENV_ARTIFACT_DRIVERS): ArtifactDriver[] {
  let doc: unknown;
  try {
    doc = readYamlDocument(text, where);
  } catch (err) {
    throw new ArtifactDriverConfigError(`${where}: ${(err as Error).message}`);
  }
  if (doc === null || doc === undefined) return [];
  if (!Array.isArray(doc))
    throw new ArtifactDriverConfigError(`${where} must be a list of {name, image, connectionTimeoutSeconds?, command?}`);
  const seen = new Set<string>();
  return doc.map((d: unknown, i) => {
    const at = `${where}[${i}]`;
    if (typeof d !== 'object' || d === null || Array.isArray(d)) throw new ArtifactDriverConfigError(`${at} must be an object`);
    const e = d as Record<string, unknown>;
    for (const k of Object.keys(e))
      if (!['name', 'image', 'connectionTimeoutSeconds', 'command'].includes(k))
        throw new ArtifactDriverConfigError(`${at}.${k} is not a field of a driver`);
    if (typeof e.name !== 'string' || !NAME.test(e.name))
      throw new ArtifactDriverConfigError(
        `${at}.name must be a DNS label of at most 47 characters (it names the driver's container and socket)`,
      );
    if (seen.has(e.name)) throw new ArtifactDriverConfigError(`${at}.name "${e.name}" is registered twice`);
    seen.add(e.name);
    if (typeof e.image !== 'string' || e.image.trim() === '') throw new ArtifactDriverConfigError(`${at}.image is required`);
    const out: ArtifactDriver = { name: e.name, image: e.image };
    if (e.connectionTimeoutSeconds !== undefined) {
      const t = e.connectionTimeoutSeconds;
      if (typeof t !== 'number' || !Number.isInteger(t) || t <= 0 || t > 3600)
        throw new ArtifactDriverConfigError(`${at}.connectionTimeoutSeconds must be a whole number of seconds from 1 to 3600`);
      out.connectionTimeoutSeconds = t;
    }
    if (e.command !== undefined) {
      if (!Array.isArray(e.command) || e.command.length === 0 || !e.command.every((c) => typeof c === 'string'))
        throw new ArtifactDriverConfigError(`${at}.command must be a non-empty list of strings`);
      out.command = [...(e.command as string[])];
    }
    return out;
  });
}

export function artifactDriversFromEnv(env: NodeJS.ProcessEnv = process.env): ArtifactDriver[] {
  const text = env[ENV_ARTIFACT_DRIVERS];
  return text?.trim() ? parseArtifactDrivers(text) : [];
}
