import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

describe('how dev mode talks to the API server', () => {
  it('uses src/kube, not client-node generated API classes (client-node only loads kubeconfigs)', () => {
    const dir = new URL('./', import.meta.url);
    const files = readdirSync(dir).filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'));
    expect(files).toContain('dev-stack.ts');
    const offenders = files.filter((f) => /makeApiClient|\b\w+V\d\w*Api\b/.test(readFileSync(new URL(f, dir), 'utf8')));
    expect(offenders).toEqual([]);
  });
});
