import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PLUGFLOW_RELEASE } from '../api/index.js';

describe('the release', () => {
  it('is the one `plugflow --version` says and the one the server answers /api/v1/version with', () => {
    // main.ts runs the CLI when loaded, so its constant is read, not imported.
    const main = readFileSync(join(import.meta.dirname, 'main.ts'), 'utf8');
    expect(/const RELEASE = '([^']+)';/.exec(main)?.[1]).toBe(PLUGFLOW_RELEASE);
  });
});
