/**
 * Rewrites the supported/refused field list in src/engine/README.md from src/api/supported-fields.ts.
 *
 *   npx tsx hack/gen-fields-doc.ts           regenerate the block
 *   npx tsx hack/gen-fields-doc.ts --check   exit 1 when the README's block is stale
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { withFieldsDoc } from '../src/api/index.js';

const README = join(import.meta.dirname, '../src/engine/README.md');
const current = readFileSync(README, 'utf8');
const wanted = withFieldsDoc(current);
if (wanted === undefined) {
  console.error(`${README} has no supported-fields markers`);
  process.exit(1);
}
if (process.argv.includes('--check')) {
  if (wanted !== current) {
    console.error('src/engine/README.md: the supported-fields list is stale; run: npx tsx hack/gen-fields-doc.ts');
    process.exit(1);
  }
  console.log('src/engine/README.md: the supported-fields list is up to date');
} else {
  writeFileSync(README, wanted);
}
