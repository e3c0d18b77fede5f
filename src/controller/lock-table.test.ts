import { describe, expect, it } from 'vitest';
import { grantKey, LockTable, type LockLimit } from './lock-table.js';

const M = 'ns/Mutex/db';
const S = 'ns/ConfigMap/limits/db';
const order = (priority: number, createdMs: number) => ({ priority, createdMs });

function table(limits: Record<string, LockLimit> = { [S]: { limit: 2 } }): LockTable {
  return new LockTable((lock) => limits[lock]);
}

describe('LockTable', () => {
  it('grants a mutex to one holder at a time, in priority then creation order', () => {
    const t = table();
    t.enqueue('ns/old', order(0, 1), [{ holder: 'ns/old', locks: [M] }]);
    t.enqueue('ns/new', order(0, 2), [{ holder: 'ns/new', locks: [M] }]);
    t.enqueue('ns/urgent', order(5, 3), [{ holder: 'ns/urgent', locks: [M] }]);
    expect([...t.dispatch()]).toEqual(['ns/urgent']);
    expect(t.holdersOf(M)).toEqual(['ns/urgent']);
    expect([...t.dispatch()]).toEqual([]);
    // The holder ends: the grant it saw is dropped, and the oldest of the rest is served.
    t.settle('ns/urgent', order(5, 3), new Set([grantKey(M, 'ns/urgent')]), { holding: [], waiting: [] });
    expect([...t.dispatch()]).toEqual(['ns/old']);
  });

  it('says when a settle changed anything, so a workflow without locks never makes the queues be served', () => {
    const t = table();
    const none = { holding: [], waiting: [] };
    expect(t.settle('ns/plain', order(0, 1), new Set(), none)).toBe(false);
    expect(t.forget('ns/plain')).toBe(false);
    t.enqueue('ns/a', order(0, 1), [{ holder: 'ns/a', locks: [M] }]);
    t.enqueue('ns/b', order(0, 2), [{ holder: 'ns/b', locks: [M] }]);
    expect([...t.dispatch()]).toEqual(['ns/a']);
    // a still holds M, b still waits the same way: nothing new to serve.
    expect(t.settle('ns/a', order(0, 1), new Set([grantKey(M, 'ns/a')]), { holding: [{ holder: 'ns/a', locks: [M] }], waiting: [] })).toBe(
      false,
    );
    expect(t.settle('ns/b', order(0, 2), new Set(), { holding: [], waiting: [{ holder: 'ns/b', locks: [M] }] })).toBe(false);
    expect(t.observe('ns/a', [])[M]?.granted).toEqual(['ns/a']);
    // a lets go: that is a change, and b is served.
    expect(t.settle('ns/a', order(0, 1), new Set([grantKey(M, 'ns/a')]), none)).toBe(true);
    expect(t.observe('ns/a', [])).toEqual({});
    expect([...t.dispatch()]).toEqual(['ns/b']);
    expect(t.forget('ns/b')).toBe(true);
    expect(t.holdersOf(M)).toEqual([]);
  });

  it('serves a semaphore up to its limit, read live', () => {
    const limits: Record<string, LockLimit> = { [S]: { limit: 2 } };
    const t = table(limits);
    for (let i = 0; i < 5; i++) t.enqueue(`ns/w${i}`, order(0, i), [{ holder: `ns/w${i}`, locks: [S] }]);
    expect([...t.dispatch()]).toEqual(['ns/w0', 'ns/w1']);
    limits[S] = { limit: 4 };
    expect([...t.dispatch()]).toEqual(['ns/w2', 'ns/w3']);
    limits[S] = { problem: 'gone' };
    t.forget('ns/w0');
    expect([...t.dispatch()]).toEqual([]);
  });

  it("takes all of a holder's locks at once, and a blocked waiter keeps later ones from jumping ahead", () => {
    const t = table({ [S]: { limit: 1 } });
    t.enqueue('ns/a', order(0, 1), [{ holder: 'ns/a', locks: [M] }]);
    expect([...t.dispatch()]).toEqual(['ns/a']);
    t.enqueue('ns/b', order(0, 2), [{ holder: 'ns/b', locks: [M, S] }]);
    t.enqueue('ns/c', order(0, 3), [{ holder: 'ns/c', locks: [S] }]);
    // b cannot have M, so it holds nothing — and c, behind b on S, is not served before it.
    expect([...t.dispatch()]).toEqual([]);
    expect(t.holdersOf(S)).toEqual([]);
    t.forget('ns/a');
    expect([...t.dispatch()]).toEqual(['ns/b']);
    expect(t.holdersOf(S)).toEqual(['ns/b']);
  });

  it('keeps a grant made after the engine ran, and gives back only grants the engine saw and dropped', () => {
    const t = table();
    t.enqueue('ns/w', order(0, 1), [
      { holder: 'ns/w/n1', locks: [S] },
      { holder: 'ns/w/n2', locks: [S] },
    ]);
    t.dispatch();
    // The engine saw only n1's grant; n1 ended. n2's grant came after its run and stays.
    t.settle('ns/w', order(0, 1), new Set([grantKey(S, 'ns/w/n1')]), { holding: [], waiting: [{ holder: 'ns/w/n2', locks: [S] }] });
    expect(t.holdersOf(S)).toEqual(['ns/w/n2']);
  });

  it('rebuilds from statuses: holders count, finished workflows hold nothing, and a waiter keeps its place', () => {
    const t = table();
    t.rebuild([
      { key: 'ns/holder', order: order(0, 5), final: false, synchronization: { mutex: { holding: [{ mutex: M, holder: 'ns/holder' }] } } },
      {
        key: 'ns/done',
        order: order(0, 0),
        final: true,
        synchronization: { semaphore: { holding: [{ semaphore: S, holders: ['ns/done/x'] }] } },
      },
      { key: 'ns/first', order: order(0, 1), final: false, synchronization: { semaphore: { waiting: [{ semaphore: S, holders: [] }] } } },
    ]);
    expect(t.holdersOf(M)).toEqual(['ns/holder']);
    expect(t.holdersOf(S)).toEqual([]);
    // A later workflow asks first, but ns/first waited before the restart: nobody is served until it names its holder.
    t.enqueue('ns/later', order(0, 9), [{ holder: 'ns/later', locks: [S] }]);
    expect([...t.dispatch()]).toEqual([]);
    t.enqueue('ns/first', order(0, 1), [{ holder: 'ns/first/n', locks: [S] }]);
    expect([...t.dispatch()].sort()).toEqual(['ns/first', 'ns/later']);
  });

  it("observes a workflow's own grants and every holder, with the limit or the problem", () => {
    const t = table({ [S]: { problem: 'ConfigMap ns/limits does not exist' } });
    t.enqueue('ns/a', order(0, 1), [{ holder: 'ns/a', locks: [M] }]);
    t.dispatch();
    expect(t.observe('ns/a', [S])).toEqual({
      [M]: { granted: ['ns/a'], holders: ['ns/a'], limit: 1 },
      [S]: { granted: [], holders: [], problem: 'ConfigMap ns/limits does not exist' },
    });
    expect(t.observe('ns/b', [M])[M]).toEqual({ granted: [], holders: ['ns/a'], limit: 1 });
  });

  it('settling an ended workflow (no claims) gives back everything, also grants it never saw', () => {
    const t = table();
    t.enqueue('ns/a', order(0, 1), [{ holder: 'ns/a', locks: [M] }]);
    t.dispatch();
    t.settle('ns/a', order(0, 1), new Set(), undefined);
    expect(t.holdersOf(M)).toEqual([]);
  });
});
