/**
 * A user's clone has nothing beside it: no code, test, bench or build script may read a file
 * outside the repository (the team's `../shared` folder least of all). Test data lives in the
 * repository (src/expr/testdata/).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

describe('the repository is self-contained', () => {
  it('no source, test, bench, hack script or Makefile refers to a folder beside the repository', () => {
    const files = execFileSync('git', ['ls-files', 'src', 'test', 'bench', 'hack', 'ui', 'Makefile', '.ci'], {
      cwd: ROOT,
      encoding: 'utf8',
    })
      .split('\n')
      .filter((f) => f && !f.endsWith('.jsonl') && f !== 'src/self-contained.test.ts');
    const outside = files.filter((f) => /\.\.\/(\.\.\/)*shared\//.test(readFileSync(join(ROOT, f), 'utf8')));
    expect(outside).toEqual([]);
  });
});
