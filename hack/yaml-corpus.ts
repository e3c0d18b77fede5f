/**
 * Records what kubectl makes of each file in test/yaml-corpus: `NAME.json` (the documents) or
 * `NAME.refused` (kubectl's error). src/yaml/kube-yaml.test.ts checks plugflow's reader against
 * these records always, and against kubectl itself when it is installed.
 *   npx tsx hack/yaml-corpus.ts
 */
import { readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { kubectlMissing, kubectlRead } from '../src/yaml/kubectl-oracle.js';

const dir = join(import.meta.dirname, '..', 'test', 'yaml-corpus');
const missing = kubectlMissing();
if (missing) {
  console.error(missing);
  process.exit(1);
}
for (const file of readdirSync(dir)
  .filter((f) => f.endsWith('.yaml'))
  .sort()) {
  const base = join(dir, file.replace(/\.yaml$/, ''));
  const r = kubectlRead(join(dir, file));
  rmSync(`${base}.json`, { force: true });
  rmSync(`${base}.refused`, { force: true });
  if (r.ok) writeFileSync(`${base}.json`, JSON.stringify(r.docs, null, 2) + '\n');
  else writeFileSync(`${base}.refused`, r.error.replace(/error parsing \S+?: /, 'error parsing FILE: ') + '\n');
  console.log(`${file}: ${r.ok ? `${r.docs.length} document(s)` : 'refused'}`);
}
