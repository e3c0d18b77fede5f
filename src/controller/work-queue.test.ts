import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { WorkQueue } from './work-queue.js';

/** Takes whatever is ready now without waiting. */
async function drainReady(q: WorkQueue): Promise<string[]> {
  const out: string[] = [];
  while (q.len() > 0) out.push((await q.get())!);
  return out;
}

describe('WorkQueue', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('dedups keys waiting in the queue and keeps first-in order', async () => {
    const q = new WorkQueue();
    q.add('a');
    q.add('b');
    q.add('a');
    expect(q.len()).toBe(2);
    expect(await drainReady(q)).toEqual(['a', 'b']);
  });

  it('puts urgent keys (a hand-over) ahead of ordinary ones, in their own order, moving a queued one forward', async () => {
    const q = new WorkQueue();
    q.add('a');
    q.add('b');
    q.add('c');
    q.addUrgent('x');
    q.addUrgent('c'); // queued already: moves forward, behind x
    q.addUrgent('x'); // no second copy
    q.add('d');
    expect(q.len()).toBe(5);
    expect(await drainReady(q)).toEqual(['x', 'c', 'a', 'b', 'd']);
    for (const k of ['x', 'c', 'a', 'b', 'd']) q.done(k);
  });

  it('an urgent key being processed goes first once done; taken, it is ordinary again', async () => {
    const q = new WorkQueue();
    q.add('busy');
    expect(await q.get()).toBe('busy');
    q.add('a');
    q.addUrgent('busy');
    q.done('busy');
    expect(await drainReady(q)).toEqual(['busy', 'a']);
    q.done('busy');
    q.done('a');
    q.add('a');
    q.add('busy');
    expect(await drainReady(q)).toEqual(['a', 'busy']);
  });

  it('never hands a key to two workers at once; an add during processing requeues it after done', async () => {
    const q = new WorkQueue();
    q.add('a');
    const first = await q.get();
    expect(first).toBe('a');
    q.add('a');
    q.add('a');
    expect(q.len()).toBe(0); // held back while a worker has it
    let second: string | undefined;
    void q.get().then((k) => (second = k));
    await Promise.resolve();
    expect(second).toBeUndefined();
    q.done('a');
    await Promise.resolve();
    expect(second).toBe('a');
    q.done('a');
    expect(q.len()).toBe(0);
    expect(q.inFlight()).toBe(0);
  });

  it('wakes a waiting worker when a key arrives', async () => {
    const q = new WorkQueue();
    const got = q.get();
    q.add('x');
    expect(await got).toBe('x');
  });

  it('delays addAfter keys; the earliest requested time wins; a plain add is immediate', async () => {
    const q = new WorkQueue();
    q.addAfter('a', 1000);
    q.addAfter('a', 5000);
    q.addAfter('b', 300);
    expect(q.len()).toBe(0);
    expect(q.delayedLen()).toBe(2);
    vi.advanceTimersByTime(299);
    expect(q.len()).toBe(0);
    vi.advanceTimersByTime(1);
    expect(await drainReady(q)).toEqual(['b']);
    q.done('b');
    vi.advanceTimersByTime(700);
    expect(await drainReady(q)).toEqual(['a']);
    q.done('a');
    vi.advanceTimersByTime(10_000);
    expect(q.len()).toBe(0);
    q.addAfter('c', 0);
    expect(q.len()).toBe(1);
  });

  it('backs off exponentially per key on addRateLimited and resets on forget', async () => {
    const q = new WorkQueue({ backoff: { initialMs: 100, maxMs: 1000 } });
    const delays: number[] = [];
    for (let i = 0; i < 5; i++) {
      q.addRateLimited('k');
      const t0 = Date.now();
      while (q.len() === 0) vi.advanceTimersByTime(10);
      delays.push(Date.now() - t0);
      await q.get();
      q.done('k');
    }
    expect(delays).toEqual([100, 200, 400, 800, 1000]);
    expect(q.retries('k')).toBe(5);
    q.forget('k');
    expect(q.retries('k')).toBe(0);
    q.addRateLimited('other');
    expect(q.retries('other')).toBe(1);
  });

  it('drains on shutdown: queued and in-flight keys finish, new keys are refused, waiters are released', async () => {
    const q = new WorkQueue();
    q.add('a');
    q.add('b');
    q.addAfter('later', 1000);
    const a = (await q.get())!;
    let stopped = false;
    const stopping = q.shutDown({ drain: true }).then(() => (stopped = true));
    q.add('refused');
    await Promise.resolve();
    expect(stopped).toBe(false);
    expect(await q.get()).toBe('b');
    const released = q.get();
    expect(await released).toBeUndefined();
    q.done(a);
    await Promise.resolve();
    expect(stopped).toBe(false);
    q.done('b');
    await stopping;
    expect(stopped).toBe(true);
    vi.advanceTimersByTime(2000);
    expect(await q.get()).toBeUndefined();
    expect(q.len()).toBe(0);
  });

  it('shutdown without drain drops queued keys but waits for in-flight ones', async () => {
    const q = new WorkQueue();
    q.add('a');
    q.add('b');
    await q.get();
    let stopped = false;
    const stopping = q.shutDown().then(() => (stopped = true));
    expect(await q.get()).toBeUndefined();
    await Promise.resolve();
    expect(stopped).toBe(false);
    q.done('a');
    await stopping;
    expect(q.len()).toBe(0);
  });
});
