import { describe, expect, it } from 'vitest';
import { FairLanes } from './fair-lanes.js';

describe('FairLanes', () => {
  it('takes the next item from the lanes in turn, not in arrival order', () => {
    const f = new FairLanes<string>({ waiting: 100, laneWaiting: 100, running: 100, laneRunning: 100 });
    for (const i of [1, 2, 3, 4]) f.offer('flood', `flood-${i}`);
    f.offer('quiet', 'quiet-1');
    f.offer('other', 'other-1');
    const order: string[] = [];
    for (let n = f.next(); n; n = f.next()) order.push(n.item);
    expect(order).toEqual(['flood-1', 'quiet-1', 'other-1', 'flood-2', 'flood-3', 'flood-4']);
  });

  it('holds a lane to its share of the waiting room and of the workers; others still get both', () => {
    const f = new FairLanes<string>({ waiting: 8, running: 4 });
    expect([f.laneWaitingCap, f.laneRunningCap]).toEqual([4, 2]);
    const took = Array.from({ length: 10 }, (_, i) => f.offer('flood', `f${i}`));
    expect(took.filter(Boolean).length).toBe(4);
    expect(f.offer('quiet', 'q0')).toBe(true);
    // The flood runs on half the workers; the quiet lane's event runs at once beside it.
    const running = [f.next(), f.next(), f.next(), f.next()].map((n) => n?.item);
    expect(running).toEqual(['f0', 'q0', 'f1', undefined]);
    f.finished('flood');
    expect(f.next()?.item).toBe('f2');
    expect(f.running).toBe(3);
  });

  it('gives back what waits, and refuses to finish what never ran', () => {
    const f = new FairLanes<number>({ waiting: 4, running: 1 });
    f.offer('a', 1);
    f.offer('b', 2);
    f.offer('a', 3);
    expect(f.next()?.item).toBe(1);
    expect(f.takeWaiting().sort()).toEqual([2, 3]);
    expect(f.waiting).toBe(0);
    expect(() => f.finished('b')).toThrow(/nothing of lane "b" is running/);
    f.finished('a');
    expect(f.held('a')).toBe(0);
  });
});
