import { describe, expect, it } from 'vitest';
import { runJqFilter } from './jq-filter.js';

describe('jq filters (real jq in a bounded worker)', () => {
  it('prints each result on a line, strings raw and other values as compact JSON', async () => {
    expect(await runJqFilter({ a: { b: [1, 'x', { c: true }] } }, '.a.b[]')).toBe('1\nx\n{"c":true}');
    expect(await runJqFilter({ metadata: { name: 'j' } }, '.')).toBe('{"metadata":{"name":"j"}}');
    expect(await runJqFilter({ items: [{ n: 2 }, { n: 5 }] }, '[.items[] | select(.n > 3) | .n] | length')).toBe('1');
  });

  it("rejects with jq's message when the filter does not compile or fails", async () => {
    await expect(runJqFilter({}, '.a |||')).rejects.toThrow(/syntax error/);
    await expect(runJqFilter({ a: 'x' }, '.a + 1')).rejects.toThrow(/cannot be added/);
  });

  it('stops a filter that never ends, without blocking the caller', async () => {
    const started = Date.now();
    let ticks = 0;
    const timer = setInterval(() => ticks++, 50);
    await expect(runJqFilter({}, 'repeat(.)', { timeoutMs: 800 })).rejects.toThrow(/did not finish within 800 ms/);
    clearInterval(timer);
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(ticks).toBeGreaterThan(3);
  }, 20_000);

  it('stops a filter that allocates past its memory bound', async () => {
    await expect(runJqFilter({}, '[range(100000000)] | length', { timeoutMs: 15_000, memoryBytes: 64 * 1024 * 1024 })).rejects.toThrow(
      'the filter needs more than 64 MiB',
    );
  }, 20_000);
});
