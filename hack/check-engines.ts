/**
 * `npx tsx hack/check-engines.ts` (part of `make lint`): every package in package-lock.json
 * (runtime and development: the tests run on the same Node.js) accepts every Node.js version
 * plugflow's package.json promises (`engines.node`). A dependency that asks for more is named with
 * its range, so the promise is raised or the dependency changed (an npm override, another version)
 * before a user on the promised version meets it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import semver from 'semver';

const root = join(import.meta.dirname, '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { engines?: { node?: string } };
const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, { version?: string; optional?: boolean; engines?: { node?: string } | string[] }>;
};
const promise = pkg.engines?.node;
if (!promise) {
  console.error('package.json has no engines.node: say which Node.js versions plugflow runs on');
  process.exit(1);
}
const bad: string[] = [];
for (const [path, meta] of Object.entries(lock.packages)) {
  if (!path) continue;
  const wanted = Array.isArray(meta.engines) ? undefined : meta.engines?.node;
  if (!wanted) continue;
  // An optional package (a platform binary) that does not fit is not installed, and not needed.
  if (meta.optional) continue;
  const range = semver.validRange(wanted.replace(/\.x\b/g, ''));
  if (!range) continue; // an unparsable range promises nothing to check
  if (!semver.subset(promise, range)) bad.push(`${path.replace(/^.*node_modules\//, '')}@${meta.version ?? '?'} wants node ${wanted}`);
}
if (bad.length > 0) {
  console.error(`engines: package.json promises node ${promise}, but:\n  ${bad.join('\n  ')}`);
  process.exit(1);
}
console.log(`engines: every package accepts node ${promise}`);
