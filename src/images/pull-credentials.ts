/**
 * Registry credentials from image pull secrets, as the kubelet reads them: a Secret of type
 * `kubernetes.io/dockerconfigjson` (key `.dockerconfigjson`, `{"auths": {registry: entry}}`) or
 * `kubernetes.io/dockercfg` (key `.dockercfg`, `{registry: entry}`), each entry holding
 * `username`/`password` or `auth` (base64 of `user:password`). Registry keys may carry a scheme
 * and a path (`https://index.docker.io/v1/`); only the host counts.
 */
import { registryAliases } from './image-reference.js';

export interface RegistryCredential {
  username: string;
  password: string;
  /** Where it came from, for messages: `secret regcred`. Never the values. */
  source: string;
}

interface SecretLike {
  metadata?: { name?: string };
  type?: string;
  data?: Record<string, string>;
}

export class PullSecretError extends Error {
  override readonly name = 'PullSecretError';
}

/** The credentials a pull secret holds, by registry host; a malformed secret is a PullSecretError naming it. */
export function credentialsFromSecret(secret: SecretLike): Map<string, RegistryCredential> {
  const name = secret.metadata?.name ?? '(unnamed)';
  const source = `secret ${name}`;
  const data = secret.data ?? {};
  let auths: unknown;
  const parse = (key: string): unknown => {
    try {
      return JSON.parse(Buffer.from(data[key]!, 'base64').toString('utf8')) as unknown;
    } catch (err) {
      throw new PullSecretError(`${source}: ${key} is not JSON (${(err as Error).message})`);
    }
  };
  if (data['.dockerconfigjson'] !== undefined) auths = (parse('.dockerconfigjson') as { auths?: unknown } | null)?.auths;
  else if (data['.dockercfg'] !== undefined) auths = parse('.dockercfg');
  else throw new PullSecretError(`${source}: has neither .dockerconfigjson nor .dockercfg (is it an image pull secret?)`);
  const out = new Map<string, RegistryCredential>();
  if (!auths || typeof auths !== 'object' || Array.isArray(auths)) return out;
  for (const [key, entry] of Object.entries(auths as Record<string, unknown>)) {
    if (!entry || typeof entry !== 'object') continue;
    const e = entry as { username?: unknown; password?: unknown; auth?: unknown };
    let username = typeof e.username === 'string' ? e.username : '';
    let password = typeof e.password === 'string' ? e.password : '';
    if (!username && typeof e.auth === 'string' && e.auth) {
      const decoded = Buffer.from(e.auth, 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      if (colon < 0) throw new PullSecretError(`${source}: the auth of "${registryHost(key)}" is not base64 of user:password`);
      username = decoded.slice(0, colon);
      password = decoded.slice(colon + 1);
    }
    if (username || password) out.set(registryHost(key), { username, password, source });
  }
  return out;
}

/** `https://index.docker.io/v1/` → `index.docker.io`; `reg:5000` stays. */
export function registryHost(key: string): string {
  return key
    .replace(/^[a-z]+:\/\//i, '')
    .replace(/\/.*$/, '')
    .toLowerCase();
}

/** The first credential (in secret order) for `registry`, taking Docker Hub's aliases into account. */
export function credentialFor(registry: string, secrets: readonly Map<string, RegistryCredential>[]): RegistryCredential | undefined {
  const names = registryAliases(registry.toLowerCase());
  for (const creds of secrets)
    for (const n of names) {
      const c = creds.get(n);
      if (c) return c;
    }
  return undefined;
}
