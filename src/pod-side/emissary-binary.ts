/**
 * Where the local pod runner gets the emissary: hack/build-emissary.sh builds it from
 * emissary/ with the Go toolchain into the cache (a no-op when the sources did not change).
 * Real clusters never use this: the binary ships in the plugflow image.
 */
import { execFile } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Builds the emissary if needed and returns the path of the binary. */
export async function ensureEmissaryBinary(): Promise<string> {
  const script = join(REPO_ROOT, 'hack', 'build-emissary.sh');
  return new Promise((resolvePath, reject) => {
    execFile('bash', [script, '--print'], { maxBuffer: 1 << 20 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`building the emissary with ${script} failed: ${stderr.trim() || err.message}`));
      else resolvePath(stdout.trim().split('\n').pop() as string);
    });
  });
}
