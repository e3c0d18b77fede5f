/**
 * The operator's list of images whose entrypoint plugflow should not ask a registry for: the
 * `images` key of the ConfigMap `plugflow-images` in the installation namespace, YAML mapping an
 * image name (exactly as templates write it) to its `entrypoint` and `cmd`. It wins over the
 * registry — for registries the controller cannot reach, or to correct an image's config.
 *
 *   images: |
 *     docker/whalesay:latest:
 *       cmd: [cowsay]
 *     registry.internal/tools/report:2:
 *       entrypoint: [/usr/bin/report]
 *       cmd: [--help]
 */
import { readYamlDocument, YamlReadError } from '../yaml/kube-yaml.js';
import type { ImageCommand } from './registry-client.js';

export const IMAGES_CONFIGMAP = 'plugflow-images';
export const IMAGES_KEY = 'images';

export class KnownImagesError extends Error {
  override readonly name = 'KnownImagesError';
}

/** The images of the ConfigMap's `images` key; `where` (namespace/name) names it in errors. */
export function parseKnownImages(text: string | undefined, where: string): Map<string, ImageCommand> {
  const out = new Map<string, ImageCommand>();
  if (text === undefined || !text.trim()) return out;
  let doc: unknown;
  try {
    doc = readYamlDocument(text, `ConfigMap ${where} key ${IMAGES_KEY}`);
  } catch (err) {
    const why = err instanceof YamlReadError ? err.detail : (err as Error).message.split('\n')[0];
    throw new KnownImagesError(`ConfigMap ${where} key ${IMAGES_KEY} is not YAML: ${why}`);
  }
  if (doc === null || doc === undefined) return out;
  if (typeof doc !== 'object' || Array.isArray(doc))
    throw new KnownImagesError(`ConfigMap ${where} key ${IMAGES_KEY} must map image names to {entrypoint, cmd}`);
  for (const [image, entry] of Object.entries(doc as Record<string, unknown>)) {
    const at = `ConfigMap ${where} key ${IMAGES_KEY}: image "${image}"`;
    if (!entry || typeof entry !== 'object' || Array.isArray(entry)) throw new KnownImagesError(`${at} must have entrypoint and/or cmd`);
    const { entrypoint, cmd, ...rest } = entry as Record<string, unknown>;
    const unknown = Object.keys(rest);
    if (unknown.length)
      throw new KnownImagesError(`${at} has unknown field ${unknown.map((k) => `"${k}"`).join(', ')} (entrypoint and cmd are read)`);
    const list = (v: unknown, field: string): string[] => {
      if (v === undefined || v === null) return [];
      if (!Array.isArray(v) || v.some((s) => typeof s !== 'string'))
        throw new KnownImagesError(`${at}: ${field} must be a list of strings`);
      return v as string[];
    };
    const command = { entrypoint: list(entrypoint, 'entrypoint'), cmd: list(cmd, 'cmd') };
    if (!command.entrypoint.length && !command.cmd.length) throw new KnownImagesError(`${at} must have entrypoint and/or cmd`);
    out.set(image, command);
  }
  return out;
}
