import { describe, expect, it } from 'vitest';
import { eventEnvironment, eventMetadataFromHeaders } from '../expr/index.js';
import type { WorkflowEventBinding } from '../api/index.js';
import { BindingFailure, compileBinding, evaluateSubmission } from './binding-compile.js';
import { checkEventId, eventIdFromHeaders, EventIdError, MAX_EVENT_ID_LENGTH, eventDigest, workflowNameForEvent } from './event-id.js';
import { workflowFromSubmission } from './workflow-from-event.js';

describe("an event's id from its request headers", () => {
  it('is the first of X-Event-Id, X-GitHub-Delivery, Ce-Id present, whatever the case of the name', () => {
    expect(eventIdFromHeaders(['Content-Type', 'application/json', 'X-GitHub-Delivery', 'gh-1', 'x-event-id', ' own-1 '])).toBe('own-1');
    expect(eventIdFromHeaders(['X-GITHUB-DELIVERY', 'gh-1', 'ce-id', 'ce-1'])).toBe('gh-1');
    expect(eventIdFromHeaders(['Ce-Id', 'ce-1'])).toBe('ce-1');
    expect(eventIdFromHeaders(['Content-Type', 'application/json'])).toBeUndefined();
  });

  it('refuses an empty, too long or control-character id, naming the header and not the value', () => {
    expect(() => eventIdFromHeaders(['X-Event-Id', '  '])).toThrow('header x-event-id is empty');
    expect(() => eventIdFromHeaders(['X-Event-Id', 'a'.repeat(MAX_EVENT_ID_LENGTH + 1)])).toThrow(
      `header x-event-id is ${MAX_EVENT_ID_LENGTH + 1} characters long: an event id has at most ${MAX_EVENT_ID_LENGTH}`,
    );
    expect(() => checkEventId('secret\u0007', 'spec.event.id')).toThrow(new EventIdError('spec.event.id holds a control character'));
  });
});

describe('the workflow name of an event with an id', () => {
  it('is the same for every delivery, and differs by binding, namespace, sender and id', () => {
    const a = workflowNameForEvent('build', 'ns', 'on-push', 'alice', 'delivery-1');
    expect(a).toMatch(/^build-[a-z2-7]{13}$/);
    expect(workflowNameForEvent('build', 'ns', 'on-push', 'alice', 'delivery-1')).toBe(a);
    const others = [
      workflowNameForEvent('build', 'ns', 'on-tag', 'alice', 'delivery-1'),
      workflowNameForEvent('build', 'other', 'on-push', 'alice', 'delivery-1'),
      workflowNameForEvent('build', 'ns', 'on-push', 'alice', 'delivery-2'),
      // Another sender who guessed alice's id gets a name of their own.
      workflowNameForEvent('build', 'ns', 'on-push', 'mallory', 'delivery-1'),
    ];
    expect(new Set([a, ...others]).size).toBe(5);
  });

  it('has a digest that a repeat shares and another event of that name does not', () => {
    const d = eventDigest('ns', 'on-push', 'alice', 'delivery-1', { ref: 'main' });
    expect(d).toMatch(/^[0-9a-f]{32}$/);
    expect(eventDigest('ns', 'on-push', 'alice', 'delivery-1', { ref: 'main' })).toBe(d);
    expect(eventDigest('ns', 'on-push', 'alice', 'delivery-1', { ref: 'evil' })).not.toBe(d);
    expect(eventDigest('ns', 'on-push', 'mallory', 'delivery-1', { ref: 'main' })).not.toBe(d);
  });

  it('keeps within 63 characters, cutting the template name', () => {
    const name = workflowNameForEvent(`${'t'.repeat(70)}-`, 'ns', 'b', 'alice', 'id');
    expect(name.length).toBe(63);
    expect(name).toMatch(/^t+-[a-z2-7]{13}$/);
  });
});

describe("a binding's spec.event.id", () => {
  const binding = (event: unknown): WorkflowEventBinding =>
    ({
      metadata: { name: 'on-push', namespace: 'ns', uid: 'u1', generation: 1 },
      spec: { event, submit: { workflowTemplateRef: { name: 'build' } } },
    }) as WorkflowEventBinding;
  const env = (payload: unknown) => eventEnvironment({ payload, metadata: eventMetadataFromHeaders({}), discriminator: '' });

  it("is evaluated over the event and wins over the header's id; the workflow carries it as an annotation", () => {
    const c = compileBinding(binding({ selector: 'true', id: '"order-" + string(payload.order)' }));
    expect(c.problems).toEqual([]);
    const s = evaluateSubmission(c, env({ order: 42 }), 'from-header');
    expect(s.eventId).toBe('order-42');
    expect(workflowFromSubmission(s, 'n').metadata.annotations).toEqual({ 'workflows.plugflow.io/event-id': 'order-42' });
    expect(evaluateSubmission(compileBinding(binding({ selector: 'true' })), env({}), 'from-header').eventId).toBe('from-header');
    expect(evaluateSubmission(compileBinding(binding({ selector: 'true' })), env({})).eventId).toBeUndefined();
  });

  it('is a problem of the binding when it is not a string expression, and a metadata error when it yields no id', () => {
    expect(compileBinding(binding({ selector: 'true', id: 7 })).problems).toEqual([
      'spec.event.id must be a string expression over the event that yields its id, e.g. payload.delivery',
    ]);
    const c = compileBinding(binding({ selector: 'true', id: 'payload.id' }));
    expect(() => evaluateSubmission(c, env({ id: '' }))).toThrow(BindingFailure);
    expect(() => evaluateSubmission(c, env({ id: '' }))).toThrow('spec.event.id is empty');
  });
});
