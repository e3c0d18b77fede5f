import { describe, expect, it } from 'vitest';
import { deliveryVerdict } from './event-bus.js';
import type { DispatchResult } from './dispatch.js';

const result = (...errors: DispatchResult['errors']): DispatchResult => ({ workflows: [{ binding: 'a', name: 'wf-1' }], errors });
const down = {
  binding: 'b',
  reason: 'submit_error' as const,
  message: 'creating Workflow ns/wf-2: 503: etcd unavailable',
  retryable: true,
};
const missing = { binding: 'c', reason: 'template_not_found' as const, message: 'WorkflowTemplate ns/x does not exist' };

describe('deliveryVerdict', () => {
  it('acknowledges a delivery whose workflows exist, and one whose failures will not heal (they are on the binding)', () => {
    expect(deliveryVerdict(result(), 1, 5)).toEqual({ action: 'ack' });
    expect(deliveryVerdict(result(missing), 1, 5)).toEqual({ action: 'ack' });
  });

  it('delivers again after a growing pause while the API server is down, naming why', () => {
    expect(deliveryVerdict(result(down, missing), 1, 5)).toEqual({
      action: 'retry',
      delayMs: 1000,
      reason: 'b: creating Workflow ns/wf-2: 503: etcd unavailable',
    });
    expect(deliveryVerdict(result(down), 3, 5)).toMatchObject({ action: 'retry', delayMs: 4000 });
    expect(deliveryVerdict(result(down), 4, 50)).toMatchObject({ delayMs: 8000 });
    expect(deliveryVerdict(result(down), 9, 50)).toMatchObject({ delayMs: 30_000 });
  });

  it('dead-letters with the reason once the last allowed delivery failed', () => {
    expect(deliveryVerdict(result(down), 5, 5)).toEqual({
      action: 'dead-letter',
      reason: 'delivery 5 of 5 failed: b: creating Workflow ns/wf-2: 503: etcd unavailable',
    });
  });
});
