import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

/** The runner's source files (tests excluded) and their import lines. */
function imports(): Array<{ file: string; line: string }> {
  const dir = new URL('./', import.meta.url);
  const out: Array<{ file: string; line: string }> = [];
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))) {
    const text = readFileSync(new URL(file, dir), 'utf8');
    for (const m of text.matchAll(/^import[\s\S]*?from\s+'([^']+)';/gm)) out.push({ file, line: m[0] });
  }
  return out;
}

describe('what the runner depends on', () => {
  it('finds the import lines it checks', () => {
    expect(imports().some((i) => i.file === 'runner.ts' && i.line.includes('../kube/client.js'))).toBe(true);
  });

  it('never imports the server (shared code lives in src/kube, src/tls, src/log)', () => {
    expect(imports().filter((i) => /from '\.\.\/server\//.test(i.line))).toEqual([]);
  });

  it('talks to the API server only through src/kube: client-node gives types, never calls', () => {
    const values = imports().filter((i) => i.line.includes("'@kubernetes/client-node'") && !/^import type\b/.test(i.line));
    expect(values).toEqual([]);
  });
});
