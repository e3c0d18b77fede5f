/**
 * An image name as a pod spec holds it (`alpine`, `ghcr.io/org/tool:1.2`,
 * `registry:5000/x@sha256:…`), read the way the container runtime reads it: a first component
 * with a dot or a port, or `localhost`, is the registry; otherwise the image is on Docker Hub,
 * and a single-component name there is under `library/`. No tag and no digest means `latest`.
 */

export interface ImageReference {
  /** Host (and port) the OCI distribution API is asked: `registry-1.docker.io` for Docker Hub. */
  host: string;
  /** The registry's name in pull secrets: `docker.io` for Docker Hub, else `host`. */
  registry: string;
  /** Repository path inside the registry, e.g. `library/alpine`. */
  repository: string;
  tag?: string;
  digest?: string;
  /** The manifest reference asked for: the digest when pinned, else the tag. */
  reference: string;
}

export class ImageReferenceError extends Error {
  override readonly name = 'ImageReferenceError';
}

const DOCKER_HUB = 'docker.io';
const DOCKER_HUB_API = 'registry-1.docker.io';
const COMPONENT = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/;
const TAG = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;
const DIGEST = /^[a-z0-9]+(?:[+._-][a-z0-9]+)*:[a-zA-Z0-9=_-]{32,}$/;
const HOST = /^(?:[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*|\[[0-9A-Fa-f:]+\])(?::[0-9]{1,5})?$/;

export function parseImageReference(image: string): ImageReference {
  const bad = (why: string): never => {
    throw new ImageReferenceError(`image "${image}" is not a valid image reference: ${why}`);
  };
  if (!image || image.length > 512) bad('it must have 1 to 512 characters');
  let rest = image;
  let digest: string | undefined;
  const at = rest.indexOf('@');
  if (at >= 0) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
    if (!DIGEST.test(digest)) bad(`"${digest}" is not a digest (algorithm:hex)`);
  }
  let tag: string | undefined;
  const lastSlash = rest.lastIndexOf('/');
  const colon = rest.lastIndexOf(':');
  if (colon > lastSlash) {
    tag = rest.slice(colon + 1);
    rest = rest.slice(0, colon);
    if (!TAG.test(tag)) bad(`"${tag}" is not a tag`);
  }
  const parts = rest.split('/');
  let host = DOCKER_HUB;
  const first = parts[0]!;
  if (parts.length > 1 && (first.includes('.') || first.includes(':') || first === 'localhost' || first.startsWith('['))) {
    host = parts.shift()!;
    if (!HOST.test(host)) bad(`"${host}" is not a registry host`);
  }
  if (host === 'index.docker.io') host = DOCKER_HUB;
  if (host === DOCKER_HUB && parts.length === 1) parts.unshift('library');
  for (const p of parts) if (!COMPONENT.test(p)) bad(`"${p}" is not a repository path component (lowercase letters, digits, separators)`);
  if (!tag && !digest) tag = 'latest';
  return {
    host: host === DOCKER_HUB ? DOCKER_HUB_API : host,
    registry: host,
    repository: parts.join('/'),
    ...(tag ? { tag } : {}),
    ...(digest ? { digest } : {}),
    reference: digest ?? tag!,
  };
}

/** The registry names a pull secret's key may use for `registry` (Docker Hub has several). */
export function registryAliases(registry: string): string[] {
  return registry === DOCKER_HUB ? [DOCKER_HUB, 'index.docker.io', DOCKER_HUB_API] : [registry];
}
