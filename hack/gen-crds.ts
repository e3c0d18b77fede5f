/**
 * Writes crds/*.yaml from the TypeScript schemas in src/api/crd/.
 *
 *   npx tsx hack/gen-crds.ts           regenerate the files (and delete stale generated ones)
 *   npx tsx hack/gen-crds.ts --check   exit 1 when crds/ differs from what would be generated
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CRDS_DIR } from '../src/api/index.js';
import { CRD_FILE_HEADER, renderCrdFiles } from '../src/api/index.js';

function generatedFilesOnDisk(): string[] {
  if (!existsSync(CRDS_DIR)) return [];
  return readdirSync(CRDS_DIR).filter(
    (f) => f.endsWith('.yaml') && readFileSync(join(CRDS_DIR, f), 'utf8').startsWith(CRD_FILE_HEADER.split('\n')[0]!),
  );
}

function main(argv: string[]): number {
  const check = argv.includes('--check');
  const wanted = renderCrdFiles();
  const stale: string[] = [];
  for (const [name, text] of wanted) {
    const path = join(CRDS_DIR, name);
    const current = existsSync(path) ? readFileSync(path, 'utf8') : undefined;
    if (current !== text) stale.push(current === undefined ? `${name} (missing)` : `${name} (differs)`);
  }
  const extra = generatedFilesOnDisk().filter((f) => !wanted.has(f));
  stale.push(...extra.map((f) => `${f} (no longer generated)`));

  if (check) {
    if (stale.length === 0) {
      console.log(`crds/ is up to date (${wanted.size} CRDs)`);
      return 0;
    }
    console.error(`crds/ is stale: ${stale.join(', ')}\nrun: npx tsx hack/gen-crds.ts`);
    return 1;
  }
  mkdirSync(CRDS_DIR, { recursive: true });
  for (const [name, text] of wanted) writeFileSync(join(CRDS_DIR, name), text);
  for (const f of extra) rmSync(join(CRDS_DIR, f));
  console.log(`wrote ${wanted.size} CRDs to crds/${stale.length === 0 ? ' (no changes)' : `: ${stale.join(', ')}`}`);
  return 0;
}

process.exitCode = main(process.argv.slice(2));
