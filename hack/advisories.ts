/**
 * Checks the runtime packages of package-lock.json against the advisories recorded in
 * docs/advisories.json (`make advisories`).
 *
 * Why this exists: `npm audit` cannot reach its advisory service from the machines this project is
 * built on (the registry answers 405 to POST /-/npm/v1/security/advisories/bulk), so the advisories
 * of the runtime dependencies are looked up by hand and kept, dated, in docs/advisories.json. This
 * script does the part that must not be done by hand: it lists every runtime package name@version
 * in the lockfile (entries without `"dev": true`; a package can be there at several versions) and
 * matches each against the recorded affected ranges with semver.
 *
 * Output: the date of the check; every runtime package version hit by a recorded advisory (exit 1
 * if any); then the runtime packages not reviewed since that date: name absent from `reviewed`, or
 * installed at a version not listed there (exit 0 for those unless `--strict`).
 *
 * To refresh: for each package this script lists as hit or not reviewed (and for those in
 * `reviewed` whose date is old), search the GitHub advisory database / advisory-database PRs /
 * Dependabot alerts for its advisories; add each one to `advisories` with the affected range as the
 * advisory states it (semver range syntax, `||` between branches), the fixed version(s) and the
 * source URL; set `reviewed[name]` to the installed version(s) (comma-separated when several), and
 * set `checked` to the day of the search.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import semver from 'semver';

interface Advisory {
  package: string;
  id: string;
  affected: string;
  fixed: string;
  summary: string;
  source: string;
}

interface AdvisoryFile {
  checked: string;
  method: string;
  advisories: Advisory[];
  /** name → version(s) reviewed, comma-separated when the lockfile holds several. */
  reviewed: Record<string, string>;
}

interface LockEntry {
  name?: string;
  version?: string;
  dev?: boolean;
  link?: boolean;
}

const root = resolve(import.meta.dirname, '..');
const strict = process.argv.includes('--strict');

const lock = JSON.parse(readFileSync(resolve(root, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockEntry> };
const db = JSON.parse(readFileSync(resolve(root, 'docs', 'advisories.json'), 'utf8')) as AdvisoryFile;

for (const a of db.advisories) {
  if (semver.validRange(a.affected) == null) throw new Error(`docs/advisories.json: ${a.package} ${a.id}: invalid range "${a.affected}"`);
}

// Runtime packages: name → installed versions.
const runtime = new Map<string, Set<string>>();
for (const [path, entry] of Object.entries(lock.packages)) {
  if (path === '' || entry.dev || entry.link || !entry.version) continue;
  const name = entry.name ?? path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);
  let versions = runtime.get(name);
  if (!versions) runtime.set(name, (versions = new Set()));
  versions.add(entry.version);
}
const names = [...runtime.keys()].sort();
const versionsOf = (name: string) => [...(runtime.get(name) ?? [])].sort(semver.compare);

console.log(`Advisories of runtime packages, checked ${db.checked} (docs/advisories.json; ${db.advisories.length} advisories recorded).`);

const hits: string[] = [];
for (const name of names) {
  for (const version of versionsOf(name)) {
    for (const a of db.advisories) {
      if (a.package === name && semver.satisfies(version, a.affected)) {
        hits.push(`  ${name}@${version}  ${a.id}  affected ${a.affected}  fixed in ${a.fixed}`);
      }
    }
  }
}
if (hits.length) {
  console.log(`\nHIT: ${hits.length} runtime package version/advisory pair(s):`);
  for (const h of hits) console.log(h);
} else {
  console.log('\nNo runtime package version is in the affected range of a recorded advisory.');
}

const unreviewed: string[] = [];
for (const name of names) {
  const seen = new Set((db.reviewed[name] ?? '').split(',').map((v) => v.trim()));
  const fresh = versionsOf(name).filter((v) => !seen.has(v));
  if (fresh.length) unreviewed.push(`${name}@${fresh.join(',')}`);
}
console.log(
  `\n${unreviewed.length} of ${names.length} runtime packages not reviewed since ${db.checked}` +
    ` (not in "reviewed", or installed at another version):`,
);
let line = ' ';
for (const item of unreviewed) {
  if (line.length + item.length > 118) {
    console.log(line);
    line = ' ';
  }
  line += ` ${item}`;
}
if (line.trim()) console.log(line);

if (hits.length) process.exit(1);
if (strict && unreviewed.length) process.exit(1);
