/**
 * What `make build` puts in dist/: test support (src/engine/test-world.ts, listed by name in
 * tsconfig.build.json's exclude) stays out, and so no shipped module may import it — tsc would
 * compile an excluded file anyway once an included one imports it.
 */
import { dirname, join, relative, resolve } from 'node:path';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

// fileURLToPath, not URL.pathname: a checkout under a path with a space is percent-encoded there.
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const CONFIG = join(ROOT, 'tsconfig.build.json');

function buildConfig(): { files: string[]; excluded: string[] } {
  const read = ts.readConfigFile(CONFIG, (p) => ts.sys.readFile(p));
  if (read.error) throw new Error(ts.flattenDiagnosticMessageText(read.error.messageText, '\n'));
  const parsed = ts.parseJsonConfigFileContent(read.config, ts.sys, ROOT, undefined, CONFIG);
  const excludes = (read.config.exclude ?? []) as string[];
  return {
    files: parsed.fileNames.map((f) => relative(ROOT, f)),
    // The named files (not globs) are the test-support modules.
    excluded: excludes.filter((e) => !e.includes('*')),
  };
}

/** The relative modules a file imports or re-exports (static or dynamic), as repo-relative .ts paths. */
function relativeImports(file: string): string[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const specs = [...text.matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*)['"](\.[^'"]+)['"]/g)].map((m) => m[1]!);
  return specs.map((spec) => relative(ROOT, resolve(ROOT, dirname(file), spec)).replace(/\.js$/, '.ts'));
}

describe('tsconfig.build.json', () => {
  const { files, excluded } = buildConfig();

  it('names src/engine/test-world.ts as test support', () => {
    expect(excluded).toContain('src/engine/test-world.ts');
  });

  it('compiles no test file and no test-support module', () => {
    expect(files.length).toBeGreaterThan(50);
    expect(files.filter((f) => f.endsWith('.test.ts') || excluded.includes(f))).toEqual([]);
  });

  it('ships no module that imports test support (tsc would pull it into dist/)', () => {
    const offenders = files.flatMap((f) =>
      relativeImports(f)
        .filter((imp) => excluded.includes(imp))
        .map((imp) => `${f} imports ${imp}`),
    );
    expect(offenders).toEqual([]);
  });
});
