import { describe, expect, it } from 'vitest';
import type { WorkflowEventBinding } from '../api/index.js';
import { testEvent } from './event-test.js';

const binding = (name: string, spec: unknown): WorkflowEventBinding =>
  ({ apiVersion: 'plugflow.io/v1alpha1', kind: 'WorkflowEventBinding', metadata: { name, namespace: 'ns' }, spec }) as WorkflowEventBinding;

const submit = { workflowTemplateRef: { name: 't' }, arguments: { parameters: [{ name: 'p', valueFrom: { event: 'payload.n * 2' } }] } };
const event = { namespace: 'ns', discriminator: 'd', payload: { n: 21 }, headers: { 'X-Kind': 'a', authorization: 'Bearer x' } };
const now = new Date('2026-11-27T10:00:00Z');

describe('the event tester', () => {
  it('evaluates bindings in name order, with the workflow a match would submit', () => {
    const out = testEvent(
      [
        binding('b', { event: { selector: 'false' }, submit }),
        binding('a', { event: { selector: 'metadata["x-kind"][0] == "a"' }, submit }),
      ],
      event,
      now,
    );
    expect(out.map((v) => [v.binding, v.matched])).toEqual([
      ['a', true],
      ['b', false],
    ]);
    expect(out[0].workflow?.spec.arguments).toEqual({ parameters: [{ name: 'p', value: '42' }] });
    expect(out[0].workflow?.metadata.name).toMatch(/^t-20261127100000-[a-z0-9]{6}$/);
    expect(out[1].workflow).toBeUndefined();
  });

  it('never shows the Authorization header to a selector', () => {
    const [v] = testEvent([binding('a', { event: { selector: '"authorization" in metadata' }, submit })], event, now);
    expect(v.matched).toBe(false);
  });

  it("reports a binding's own problems and a selector that fails for this event, with the outcome the endpoint counts", () => {
    const [broken, failing] = testEvent(
      [binding('a', { event: {}, submit }), binding('b', { event: { selector: 'payload.missing.deeper == 1' }, submit })],
      event,
      now,
    );
    expect(broken.problems[0]).toMatch(/^spec\.event\.selector is required/);
    expect(broken.matched).toBeUndefined();
    expect(failing.error?.reason).toBe('selector_error');
  });
});
