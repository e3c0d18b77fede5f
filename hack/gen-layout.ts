/**
 * Writes the layout of the project where people read it, from its sources, so it cannot drift:
 * the README's layout table from hack/layout/layers.cjs (the layers `make lint` enforces through
 * .dependency-cruiser.cjs), and the file table of every folder README (src/<folder>/README.md)
 * from the doc comment each file opens with.
 *
 *   npx tsx hack/gen-layout.ts           rewrite the tables
 *   npx tsx hack/gen-layout.ts --check   exit 1 naming what is stale: a table, a folder of src/
 *                                        missing from the layers, a file without a doc comment
 */
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';
import { fileTable, layoutTable, replaceBlock, type Layer } from './layout/tables.js';

const ROOT = join(import.meta.dirname, '..');
const layers = createRequire(import.meta.url)('./layout/layers.cjs') as Layer[];
const check = process.argv.includes('--check');
const problems: string[] = [];

// Every folder of src/ is declared, and every declared folder exists.
const declared = new Set(layers.flatMap((l) => Object.keys(l.folders)));
const folders = readdirSync(join(ROOT, 'src')).filter((d) => statSync(join(ROOT, 'src', d)).isDirectory());
for (const d of folders) if (!declared.has(d)) problems.push(`src/${d}/ is not declared in hack/layout/layers.cjs`);
for (const d of declared) if (!folders.includes(d)) problems.push(`hack/layout/layers.cjs declares src/${d}/, which does not exist`);

const targets: Array<{ file: string; name: string; body: string }> = [
  { file: join(ROOT, 'README.md'), name: 'layout', body: layoutTable(layers) },
];
for (const d of folders) {
  const readme = join(ROOT, 'src', d, 'README.md');
  if (!existsSync(readme)) continue;
  const files = sourceFiles(join(ROOT, 'src', d));
  const rows = files.map((f) => {
    const summary = leadingSummary(readFileSync(f, 'utf8'));
    if (!summary) problems.push(`${relative(ROOT, f)} opens with no doc comment (/** … */) saying what it is`);
    return { file: relative(join(ROOT, 'src', d), f), summary: summary ?? '' };
  });
  targets.push({ file: readme, name: 'files', body: fileTable(rows) });
}

for (const t of targets) {
  const current = readFileSync(t.file, 'utf8');
  const wanted = replaceBlock(current, t.name, t.body);
  if (wanted === undefined) {
    problems.push(`${relative(ROOT, t.file)} has no <!-- ${t.name}:begin --> … <!-- ${t.name}:end --> block`);
    continue;
  }
  if (wanted === current) continue;
  if (check) problems.push(`${relative(ROOT, t.file)}: the ${t.name} table is stale; run: npx tsx hack/gen-layout.ts`);
  else writeFileSync(t.file, wanted);
}

if (problems.length > 0) {
  for (const p of problems) console.error(p);
  process.exit(1);
}
console.log(check ? 'layout: the README and folder READMEs are up to date' : 'layout: tables written');

/** The shipped TypeScript files under `dir` (tests and test support left out), sorted. */
function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name !== 'testing') out.push(...sourceFiles(p));
    } else if (/\.tsx?$/.test(e.name) && !/\.test\.tsx?$/.test(e.name)) out.push(p);
  }
  return out.sort();
}

/** The first sentence of the file's opening doc comment (before its first declaration). */
function leadingSummary(text: string): string | undefined {
  const at = text.indexOf('/**');
  const decl = text.search(/^(export\s+(?!\{|\*|type\s*\{)|function|class|const|let|type|interface|async|enum|declare)\b/m);
  if (at < 0 || (decl >= 0 && decl < at)) return undefined;
  const end = text.indexOf('*/', at);
  const body = text
    .slice(at + 3, end)
    .split('\n')
    .map((l) => l.replace(/^\s*\*\s?/, '').trim())
    .join('\n')
    .trim()
    .split(/\n\s*\n/)[0]!
    .replace(/\s+/g, ' ');
  const sentence = /^(.+?\.)(\s|$)/.exec(body)?.[1] ?? body;
  return sentence.length > 220 ? `${sentence.slice(0, 219).replace(/\s+\S*$/, '')} …` : sentence;
}
