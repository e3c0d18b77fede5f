import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// index.ts and the README promise the expression language does no I/O: no shipped module here
// may import a module that reaches files, the network, processes or Kubernetes. (node:util's
// isDeepStrictEqual is pure and allowed.)
const DIR = fileURLToPath(new URL('.', import.meta.url));
const IO_MODULES =
  /^(node:)?(fs|fs\/promises|net|http|https|http2|tls|dgram|dns|child_process|worker_threads|cluster|readline)$|^undici$|^@kubernetes\//;

function shippedFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? shippedFiles(join(dir, e.name)) : e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') ? [join(dir, e.name)] : [],
  );
}

describe('src/expr does no I/O', () => {
  it('no shipped module imports an I/O module', () => {
    const files = shippedFiles(DIR);
    expect(files.length).toBeGreaterThan(20);
    const offenders = files.flatMap((f) =>
      [...readFileSync(f, 'utf8').matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*)['"]([^'"]+)['"]/g)]
        .map((m) => m[1]!)
        .filter((spec) => IO_MODULES.test(spec))
        .map((spec) => `${relative(DIR, f)} imports ${spec}`),
    );
    expect(offenders).toEqual([]);
  });
});
