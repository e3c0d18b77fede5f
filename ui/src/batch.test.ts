import { describe, expect, it } from 'vitest';
import { batchRefusal, planBatch, requestOf, stateReason } from './batch.js';
import type { Access, Workflow } from './types.js';

const wf = (namespace: string, name: string, phase: string): Workflow => ({ metadata: { namespace, name }, status: { phase } }) as Workflow;

const refused = (verb: string, ns: string, purpose: string): Access => ({
  allowed: false,
  reason: `forbidden: the token may not ${verb} workflows in namespace "${ns}", so it may not ${purpose} workflows there`,
});

describe('batch actions on the selected workflows', () => {
  it("checks each workflow's state as the single action does", () => {
    expect(stateReason('stop', wf('a', 'x', 'Running'))).toBeUndefined();
    expect(stateReason('terminate', wf('a', 'x', 'Succeeded'))).toBe('it has finished');
    expect(stateReason('retry', wf('a', 'x', 'Running'))).toBe('only a Failed or Error workflow can be retried');
    expect(stateReason('retry', wf('a', 'x', 'Error'))).toBeUndefined();
    expect(stateReason('delete', wf('a', 'x', 'Running'))).toBeUndefined();
    expect(stateReason('resubmit', wf('a', 'x', 'Succeeded'))).toBeUndefined();
  });

  it("checks the token's right in each workflow's namespace, with the action's own purpose", () => {
    const access = new Map([
      ['a', { delete: { allowed: true } }],
      ['b', { delete: refused('delete', 'b', 'delete') }],
    ]);
    const plans = planBatch('delete', [wf('a', 'x', 'Running'), wf('b', 'y', 'Failed'), wf('c', 'z', 'Failed')], access);
    expect(plans.map((p) => p.skip)).toEqual([undefined, expect.stringMatching(/may not delete workflows in namespace "b"/), undefined]);
    expect(batchRefusal(plans)).toBeUndefined();
    const retry = planBatch('retry', [wf('b', 'y', 'Failed')], new Map([['b', { retry: refused('patch', 'b', 'stop') }]]));
    expect(retry[0]!.skip).toMatch(/may not patch workflows in namespace "b", so it may not retry workflows there$/);
  });

  it('disables the button only when not one of them can be sent, saying why', () => {
    expect(batchRefusal([])).toBe('nothing is selected');
    expect(batchRefusal(planBatch('stop', [wf('a', 'x', 'Succeeded')], new Map()))).toBe('it has finished');
    expect(batchRefusal(planBatch('retry', [wf('a', 'x', 'Succeeded'), wf('a', 'y', 'Failed')], new Map()))).toBeUndefined();
  });

  it('calls the single action’s route', () => {
    expect(requestOf('delete', wf('a', 'x', ''))).toEqual({ method: 'DELETE', path: '/api/v1/workflows/a/x' });
    expect(requestOf('retry', wf('a', 'x', ''))).toEqual({ method: 'PUT', path: '/api/v1/workflows/a/x/retry' });
  });
});
