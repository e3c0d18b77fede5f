/**
 * Plugin tokens on disk: `<dir>/<plugin>/token`, one directory per plugin because each is its
 * own volume in the agent pod (see src/pods/agent-pod.ts for the isolation argument).
 *
 * `plugflow agent init` writes them with fresh randomness at pod start; the agent main container
 * reads them. Token values are never logged or returned in messages.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { errorMessage } from '../log/error-message.js';

/** Group-readable, nobody may write: the sidecar reads it through the pod's fsGroup. */
export const TOKEN_FILE_MODE = 0o440;

export function tokenPath(dir: string, plugin: string): string {
  return join(dir, plugin, 'token');
}

/** 32 random bytes, URL-safe base64 (43 characters). */
export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * Writes a new token for every plugin. An existing token is replaced (write to a fresh file
 * then rename would need a writable parent we may not own; the init container runs before any
 * reader, so a plain overwrite is safe).
 */
export function writePluginTokens(dir: string, plugins: readonly string[], generate: () => string = newToken): string[] {
  const written: string[] = [];
  for (const p of plugins) {
    if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(p)) throw new Error(`plugin name ${JSON.stringify(p)} is not a DNS label`);
    mkdirSync(join(dir, p), { recursive: true });
    const path = tokenPath(dir, p);
    try {
      chmodSync(path, 0o600); // an earlier read-only token would block the overwrite
    } catch {
      /* no earlier token */
    }
    writeFileSync(path, generate(), { mode: TOKEN_FILE_MODE });
    chmodSync(path, TOKEN_FILE_MODE); // the umask may have narrowed the mode given at creation
    written.push(path);
  }
  return written;
}

/** Reads a plugin's token (surrounding whitespace removed, as plugins do). */
export function readPluginToken(dir: string, plugin: string): string {
  const path = tokenPath(dir, plugin);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new Error(`cannot read the token of plugin ${plugin} at ${path}: ${(err as NodeJS.ErrnoException).code ?? errorMessage(err)}`);
  }
  const token = text.trim();
  if (token === '') throw new Error(`the token of plugin ${plugin} at ${path} is empty`);
  return token;
}
