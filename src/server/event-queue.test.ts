import { describe, expect, it } from 'vitest';
import { EventQueue } from './event-queue.js';

/** A gate the test opens: workers wait on it before each item. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  return { wait: () => opened, open };
}

describe('EventQueue', () => {
  it('holds at most `capacity` events in process (waiting + running) and refuses the rest', async () => {
    const g = gate();
    const handled: number[] = [];
    const q = new EventQueue<number, number>({ capacity: 3, workers: 1, gate: g.wait, handle: async (n) => (handled.push(n), n * 10) });
    const offers = [1, 2, 3, 4, 5].map((n) => q.offerAndWait(n));
    expect(offers.map((o) => o !== undefined)).toEqual([true, true, true, false, false]);
    expect(q.inProcess).toBe(3);
    g.open();
    const outcomes = await Promise.all(offers.slice(0, 3).map((o) => o ?? Promise.reject(new Error('refused'))));
    expect(outcomes).toEqual([10, 20, 30].map((value) => ({ ok: true, value })));
    expect(handled).toEqual([1, 2, 3]);
    expect(q.inProcess).toBe(0);
    expect(q.offer(6)).toBe(true);
  });

  it('runs at most `workers` handlers at once', async () => {
    let running = 0;
    let peak = 0;
    const q = new EventQueue<number, void>({
      capacity: 20,
      workers: 4,
      handle: async () => {
        peak = Math.max(peak, ++running);
        await new Promise((r) => setTimeout(r, 5));
        running--;
      },
    });
    await Promise.all(Array.from({ length: 20 }, (_, i) => q.offerAndWait(i) ?? Promise.reject(new Error(`event ${i} refused`))));
    expect(peak).toBe(4);
  });

  it('reports a failing handler in the outcome and keeps working', async () => {
    const q = new EventQueue<number, number>({
      capacity: 2,
      workers: 1,
      handle: async (n) => {
        if (n === 1) throw new Error('boom');
        return n;
      },
    });
    const [a, b] = [q.offerAndWait(1), q.offerAndWait(2)];
    expect(await a).toMatchObject({ ok: false, error: { message: 'boom' } });
    expect(await b).toEqual({ ok: true, value: 2 });
  });

  it('drain refuses new events and resolves only after every accepted one was handled', async () => {
    const g = gate();
    const handled: number[] = [];
    const q = new EventQueue<number, void>({ capacity: 5, workers: 2, gate: g.wait, handle: async (n) => void handled.push(n) });
    for (const n of [1, 2, 3, 4]) q.offer(n);
    let drained = false;
    const d = q.drain().then(() => (drained = true));
    expect(q.offer(5)).toBe(false);
    expect(q.offerAndWait(5)).toBeUndefined();
    await new Promise((r) => setTimeout(r, 10));
    expect(drained).toBe(false);
    g.open();
    await d;
    expect(handled.sort()).toEqual([1, 2, 3, 4]);
  });

  it('rejects nonsense sizes with the flag named', () => {
    expect(() => new EventQueue({ capacity: 0, workers: 1, handle: async () => {} })).toThrow(/queue size/);
    expect(() => new EventQueue({ capacity: 1, workers: 0, handle: async () => {} })).toThrow(/worker count/);
  });
});

describe('EventQueue, fair by namespace', () => {
  it("one namespace's slow events hold at most half the slots and workers: another's event runs at once", async () => {
    const g = gate();
    const handled: string[] = [];
    const q = new EventQueue<{ ns: string; n: number }, void>({
      capacity: 8,
      workers: 4,
      laneOf: (e) => e.ns,
      handle: async (e) => {
        if (e.ns === 'slow') await g.wait();
        handled.push(`${e.ns}-${e.n}`);
      },
    });
    const flood = Array.from({ length: 8 }, (_, n) => q.offerAndWait({ ns: 'slow', n }));
    expect(flood.filter((o) => o !== undefined).length).toBe(4);
    expect(q.refusal({ ns: 'slow', n: 9 })).toBe('share');
    expect(q.refusal({ ns: 'quick', n: 0 })).toBeUndefined();
    const quick = q.offerAndWait({ ns: 'quick', n: 0 });
    expect(await quick).toEqual({ ok: true, value: undefined });
    expect(handled).toEqual(['quick-0']);
    g.open();
    await Promise.all(flood.filter((o) => o !== undefined));
    expect(handled.length).toBe(5);
  });

  it('without lanes, one namespace may use the whole queue', () => {
    const q = new EventQueue<number, void>({ capacity: 4, workers: 1, gate: () => new Promise(() => {}), handle: async () => {} });
    expect([1, 2, 3, 4, 5].map((n) => q.offer(n))).toEqual([true, true, true, true, false]);
    expect(q.refusal(6)).toBe('full');
  });
});
