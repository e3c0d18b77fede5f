import { describe, expect, it } from 'vitest';
import { deferPauseMs, deliveryVerdict, failedFor } from './event-delivery.js';
import type { DispatchResult } from './dispatch.js';

const result = (...errors: DispatchResult['errors']): DispatchResult => ({ workflows: [{ binding: 'a', name: 'wf-1' }], errors });
const down = {
  binding: 'b',
  reason: 'submit_error' as const,
  message: 'creating Workflow ns/wf-2: 503: etcd unavailable',
  retryable: true,
};
const missing = { binding: 'c', reason: 'template_not_found' as const, message: 'WorkflowTemplate ns/x does not exist' };
const TEN_MINUTES = 600_000;

describe('deliveryVerdict', () => {
  it('acknowledges a delivery whose workflows exist, and one whose failures will not heal (they are on the binding)', () => {
    expect(deliveryVerdict(result(), 100, TEN_MINUTES)).toEqual({ action: 'ack' });
    expect(deliveryVerdict(result(missing), 100, TEN_MINUTES)).toEqual({ action: 'ack' });
  });

  it('delivers again after a pause that grows with the age of the event while the API server is down, naming why', () => {
    expect(deliveryVerdict(result(down, missing), 200, TEN_MINUTES)).toEqual({
      action: 'retry',
      delayMs: 1000,
      reason: 'b: creating Workflow ns/wf-2: 503: etcd unavailable',
    });
    expect(deliveryVerdict(result(down), 16_000, TEN_MINUTES)).toMatchObject({ action: 'retry', delayMs: 4000 });
    expect(deliveryVerdict(result(down), 400_000, TEN_MINUTES)).toMatchObject({ delayMs: 30_000 });
  });

  it('dead-letters with the reason once the event is older than the retry time, however often it was delivered', () => {
    expect(deliveryVerdict(result(down), TEN_MINUTES + 1000, TEN_MINUTES)).toEqual({
      action: 'dead-letter',
      reason: 'still failing 601 s after it was accepted: b: creating Workflow ns/wf-2: 503: etcd unavailable',
    });
    expect(failedFor('boom', 5_000, 1_000)).toMatchObject({ action: 'dead-letter' });
  });
});

describe('deferPauseMs', () => {
  it('grows with each return of a deferred event, up to 5 s', () => {
    expect([1, 2, 8, 100].map(deferPauseMs)).toEqual([250, 500, 2000, 5000]);
  });
});
