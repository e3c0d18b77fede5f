import { describe, expect, it } from 'vitest';
import { HttpError } from './errors.js';
import { LargeReads } from './large-reads.js';

function gate() {
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  return { open, opened };
}

describe('LargeReads', () => {
  it('runs two at once, queues the next in order, and refuses beyond the queue with a 503 that says why', async () => {
    const reads = new LargeReads({ running: 2, waiting: 1 });
    const order: string[] = [];
    const holds = [gate(), gate(), gate()];
    const run = (i: number) =>
      reads.run(`workflow w${i}`, async () => {
        order.push(`start ${i}`);
        await holds[i]!.opened;
        order.push(`end ${i}`);
        return i;
      });
    const first = run(0);
    const second = run(1);
    const third = run(2);
    await Promise.resolve();
    expect(reads.load).toEqual({ running: 2, waiting: 1 });
    const refused = await reads.run('workflow w3', async () => 3).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(HttpError);
    expect((refused as HttpError).message).toBe(
      "workflow w3 is a large read and 2 are running with 1 waiting (the server's bound); try again shortly",
    );
    expect((refused as HttpError).headers).toEqual({ 'retry-after': '2' });
    holds[0]!.open();
    expect(await first).toBe(0);
    await new Promise((r) => setTimeout(r, 0));
    expect(order).toEqual(['start 0', 'start 1', 'end 0', 'start 2']);
    holds[1]!.open();
    holds[2]!.open();
    expect(await Promise.all([second, third])).toEqual([1, 2]);
    expect(reads.load).toEqual({ running: 0, waiting: 0 });
  });

  it('gives the slot back when a read fails', async () => {
    const reads = new LargeReads({ running: 1, waiting: 0 });
    await expect(reads.run('w', () => Promise.reject(new Error('database down')))).rejects.toThrow('database down');
    expect(await reads.run('w', async () => 'next')).toBe('next');
  });
});
