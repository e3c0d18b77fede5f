import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Modules a file loads when it is evaluated: static imports and re-exports that are not type-only. */
function runtimeImports(file: string): string[] {
  const sf = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022, false);
  const out: string[] = [];
  for (const s of sf.statements) {
    if (ts.isImportDeclaration(s)) {
      const c = s.importClause;
      const typeOnly =
        c?.isTypeOnly ||
        (c && !c.name && c.namedBindings && ts.isNamedImports(c.namedBindings) && c.namedBindings.elements.every((e) => e.isTypeOnly));
      if (!typeOnly) out.push((s.moduleSpecifier as ts.StringLiteral).text);
    } else if (ts.isExportDeclaration(s) && s.moduleSpecifier) {
      const typeOnly =
        s.isTypeOnly || (s.exportClause && ts.isNamedExports(s.exportClause) && s.exportClause.elements.every((e) => e.isTypeOnly));
      if (!typeOnly) out.push((s.moduleSpecifier as ts.StringLiteral).text);
    }
  }
  return out;
}

/** Every package the module loads at start, with the chain of files that leads to each. */
function packagesLoaded(entry: string): Map<string, string[]> {
  const packages = new Map<string, string[]>();
  const seen = new Set<string>();
  const walk = (file: string, chain: string[]) => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const spec of runtimeImports(file)) {
      if (!spec.startsWith('.')) {
        const name = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!;
        if (!packages.has(name)) packages.set(name, [...chain, file.slice(SRC.length + 1)]);
        continue;
      }
      const base = resolve(dirname(file), spec).replace(/\.js$/, '');
      const next = [`${base}.ts`, join(base, 'index.ts')].find((f) => existsSync(f));
      if (next) walk(next, [...chain, file.slice(SRC.length + 1)]);
    }
  };
  walk(join(SRC, entry), []);
  return packages;
}

describe('the long-running processes load only what they use', () => {
  // src/cli/main.ts gives `plugflow controller|server|agent` only their own command, and
  // src/kube/kube-access.ts reads their credentials without client-node (≈70 MiB of RSS).
  for (const entry of ['cli/controller.ts', 'cli/server.ts', 'cli/agent.ts']) {
    it(`${entry} does not load @kubernetes/client-node at start`, () => {
      const loaded = packagesLoaded(entry);
      expect(loaded.size, 'the walk found the packages it loads').toBeGreaterThan(2);
      expect(loaded.get('@kubernetes/client-node'), 'chain of imports that loads it').toBeUndefined();
    });
  }

  it('src/cli/main.ts loads each command module when it is needed, so a process command pulls in nothing else', () => {
    expect([...packagesLoaded('cli/main.ts').keys()]).toEqual(['commander']);
  });

  it('the walk sees a package loaded through a chain of files (the CLI loads client-node for kubeconfigs)', () => {
    expect(packagesLoaded('cli/kube-backend.ts').get('@kubernetes/client-node')).toEqual(['cli/kube-backend.ts', 'kube/kubeconfig.ts']);
  });
});
