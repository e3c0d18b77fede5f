import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { StatusBatcher, type NodeWire } from './status-batcher.js';
import { readPluginToken, TOKEN_FILE_MODE, tokenPath, writePluginTokens } from './tokens.js';
import { WorkerPool } from './worker-pool.js';

describe('plugin tokens', () => {
  const dirs: string[] = [];
  afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));
  const tmp = () => {
    const d = mkdtempSync(join(tmpdir(), 'plugflow-tokens-'));
    dirs.push(d);
    return d;
  };

  it('writes one fresh random token per plugin, group-readable and not writable', () => {
    const dir = tmp();
    const files = writePluginTokens(dir, ['alpha', 'beta']);
    expect(files).toEqual([tokenPath(dir, 'alpha'), tokenPath(dir, 'beta')]);
    const a = readPluginToken(dir, 'alpha');
    const b = readPluginToken(dir, 'beta');
    expect(a).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(a).not.toBe(b);
    expect(statSync(files[0]!).mode & 0o777).toBe(TOKEN_FILE_MODE);
    // Running init again (a restarted init container) replaces the read-only file.
    writePluginTokens(dir, ['alpha']);
    expect(readPluginToken(dir, 'alpha')).not.toBe(a);
    expect(readFileSync(files[0]!, 'utf8')).not.toContain('\n');
  });

  it('refuses names that could escape the directory and reports unreadable tokens', () => {
    const dir = tmp();
    expect(() => writePluginTokens(dir, ['../evil'])).toThrow(/not a DNS label/);
    expect(() => readPluginToken(dir, 'missing')).toThrow(/cannot read the token of plugin missing at .*: ENOENT/);
  });
});

describe('WorkerPool', () => {
  it('never runs more than its size at once and runs everything', async () => {
    const pool = new WorkerPool(3);
    let active = 0;
    let peak = 0;
    const done: number[] = [];
    await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        pool.run(async () => {
          active++;
          peak = Math.max(peak, active);
          await new Promise((r) => setTimeout(r, 5));
          active--;
          done.push(i);
        }),
      ),
    );
    expect(peak).toBe(3);
    expect(done.sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(pool.inFlight).toBe(0);
  });

  it('releases the slot when the work throws', async () => {
    const pool = new WorkerPool(1);
    await expect(pool.run(async () => Promise.reject(new Error('x')))).rejects.toThrow('x');
    expect(await pool.run(async () => 42)).toBe(42);
  });
});

describe('StatusBatcher', () => {
  type Patch = { status: { nodes: Record<string, NodeWire> } };

  it('batches results, keeps the latest per node and writes absent fields as null', async () => {
    const patches: Patch[] = [];
    const b = new StatusBatcher(async (p) => void patches.push(p), { delayMs: 20, maxBatch: 10 });
    b.set('n1', { phase: 'Running', progress: '1/2', message: 'half' });
    b.set('n2', { phase: 'Succeeded' });
    b.set('n1', { phase: 'Succeeded', outputs: { result: 'x' } });
    await new Promise((r) => setTimeout(r, 60));
    expect(patches).toEqual([
      {
        status: {
          nodes: {
            n1: { phase: 'Succeeded', message: null, outputs: { result: 'x' }, progress: null },
            n2: { phase: 'Succeeded', message: null, outputs: null, progress: null },
          },
        },
      },
    ]);
    b.stop();
  });

  it('keeps patches small: at most maxBatch nodes each', async () => {
    const patches: Patch[] = [];
    const b = new StatusBatcher(async (p) => void patches.push(p), { delayMs: 1000, maxBatch: 3 });
    for (let i = 0; i < 7; i++) b.set(`n${i}`, { phase: 'Succeeded' });
    await b.flush();
    expect(patches.map((p) => Object.keys(p.status.nodes).length)).toEqual([3, 3, 1]);
    b.stop();
  });

  it('keeps patches small in bytes too: big results go out a few at a time, a single one alone', async () => {
    const patches: Patch[] = [];
    const b = new StatusBatcher(async (p) => void patches.push(p), { delayMs: 1000, maxBatch: 25, maxBatchBytes: 10_000 });
    for (let i = 0; i < 5; i++) b.set(`n${i}`, { phase: 'Succeeded', outputs: { result: 'r'.repeat(4000) } });
    b.set('huge', { phase: 'Succeeded', outputs: { result: 'h'.repeat(20_000) } });
    await b.flush();
    expect(patches.map((p) => Object.keys(p.status.nodes))).toEqual([['n0', 'n1'], ['n2', 'n3'], ['n4'], ['huge']]);
    for (const p of patches.slice(0, -1)) expect(JSON.stringify(p).length).toBeLessThan(10_100);
    b.stop();
  });

  it('retries a failed write without losing or reverting results', async () => {
    const patches: Patch[] = [];
    let fail = 2;
    const errors: string[][] = [];
    const b = new StatusBatcher(
      async (p) => {
        if (fail-- > 0) throw new Error('apiserver down');
        patches.push(p);
      },
      { delayMs: 5, retryMs: 10, onError: (_e, nodes) => errors.push(nodes) },
    );
    b.set('n1', { phase: 'Running' });
    await new Promise((r) => setTimeout(r, 8));
    b.set('n1', { phase: 'Succeeded' }); // newer than the failed attempt: must win
    await new Promise((r) => setTimeout(r, 120));
    expect(errors.length).toBe(2);
    expect(patches.at(-1)!.status.nodes.n1!.phase).toBe('Succeeded');
    expect(b.size).toBe(0);
    b.stop();
  });
});
