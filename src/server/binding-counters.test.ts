import { describe, expect, it } from 'vitest';
import { bindingCounters } from './binding-counters.js';

const on = (name: string, reason: string, count: number, firstTimestamp: string, kind = 'WorkflowEventBinding') => ({
  reason,
  count,
  firstTimestamp,
  involvedObject: { kind, name },
});

describe('bindingCounters', () => {
  it('sums the Events of every replica per binding and outcome; accepted is their total', () => {
    const c = bindingCounters([
      on('orders', 'WorkflowSubmitted', 40, '2026-11-28T10:00:05Z'), // replica a
      on('orders', 'WorkflowSubmitted', 35, '2026-11-28T10:00:01Z'), // replica b
      on('orders', 'EventDeduplicated', 3, '2026-11-28T10:02:00Z'),
      on('orders', 'WorkflowEventBindingError', 2, '2026-11-28T10:03:00Z'),
      on('deploys', 'WorkflowEventBindingError', 1, '2026-11-28T11:00:00Z'),
    ]);
    expect(c.orders).toEqual({ accepted: 80, dispatched: 75, deduplicated: 3, failed: 2, since: '2026-11-28T10:00:01Z' });
    expect(c.deploys).toEqual({ accepted: 1, dispatched: 0, deduplicated: 0, failed: 1, since: '2026-11-28T11:00:00Z' });
  });

  it("ignores other objects' Events and other reasons; a binding named like a prototype key is just a name", () => {
    const c = bindingCounters([
      on('orders', 'WorkflowSubmitted', 1, '2026-11-28T10:00:00Z', 'Workflow'),
      on('orders', 'SomethingElse', 9, '2026-11-28T10:00:00Z'),
      on('__proto__', 'WorkflowSubmitted', 2, '2026-11-28T10:00:00Z'),
    ]);
    expect(Object.keys(c)).toEqual(['__proto__']);
    expect(c['__proto__']?.dispatched).toBe(2);
    expect(({} as Record<string, unknown>).dispatched).toBeUndefined();
  });
});
