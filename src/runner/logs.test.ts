import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { containerLogPath, readContainerLog } from './logs.js';

describe('readContainerLog', () => {
  const root = mkdtempSync(join(tmpdir(), 'plugflow-logs-'));
  const path = containerLogPath(root, 'ns', 'pod', 'main');
  mkdirSync(join(root, 'ns', 'pod'), { recursive: true });
  writeFileSync(path, 'first line\nsecond line\nthird line\n');

  it('reads the whole log from <dir>/<ns>/<pod>/<container>.log', () => {
    expect(path).toBe(join(root, 'ns', 'pod', 'main.log'));
    expect(readContainerLog(root, 'ns', 'pod', 'main')).toBe('first line\nsecond line\nthird line\n');
  });

  it('reads the tail from a line boundary', () => {
    expect(readContainerLog(root, 'ns', 'pod', 'main', { tailBytes: 15 })).toBe('third line\n');
  });

  it('names the pod and container when there is no log', () => {
    expect(() => readContainerLog(root, 'ns', 'pod', 'wait')).toThrow(/no log for container "wait" of pod ns\/pod/);
  });
});
