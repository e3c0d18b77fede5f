import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { EnvelopeError, envelopeKey, openEvent, sealEvent, storedHeaders } from './event-envelope.js';

const key = envelopeKey(randomBytes(32));
const job = {
  namespace: 'team-a',
  discriminator: 'github',
  headers: ['Authorization', 'Bearer secret-token', 'X-GitHub-Event', 'push', 'cookie', 'c=1', 'x-trace', 't1'],
  eventId: 'delivery-7',
  caller: { identity: { kind: 'token' as const, token: 'secret-token' }, id: 'token:abc', hash: 'abc', source: '10.0.0.1' },
};

describe('event envelope', () => {
  it('stores the body as it came, the X- headers only, and the token sealed; reading it back gives the job', () => {
    const data = sealEvent(job, '{"ref": "main"}', 'msg-1', key);
    const text = data.toString('utf8');
    expect(text).not.toContain('secret-token');
    expect(text).not.toContain('cookie');
    expect(text.endsWith('\n{"ref": "main"}')).toBe(true);
    const { job: back } = openEvent(data, 'msg-1', key);
    expect(back).toMatchObject({
      namespace: 'team-a',
      discriminator: 'github',
      payload: { ref: 'main' },
      headers: ['X-GitHub-Event', 'push', 'x-trace', 't1'],
      eventId: 'delivery-7',
      caller: { identity: { kind: 'token', token: 'secret-token' }, id: 'token:abc', hash: 'abc', source: '10.0.0.1' },
    });
  });

  it('an event without an id is known by its message id', () => {
    const { eventId: _omit, ...noId } = job;
    expect(openEvent(sealEvent(noId, '{}', 'msg-2', key), 'msg-2', key).job.eventId).toBe('msg-2');
  });

  it('a sealed token opens only with the same key and the same message id', () => {
    const data = sealEvent(job, '{}', 'msg-3', key);
    expect(() => openEvent(data, 'msg-3', envelopeKey(randomBytes(32)))).toThrow(/does not open with this replica's --event-bus-key-file/);
    expect(() => openEvent(data, 'another-message', key)).toThrow(EnvelopeError);
    expect(() => sealEvent(job, '{}', 'msg-4', undefined)).toThrow(/no --event-bus-key-file/);
  });

  it("the server's own identity needs no key; a stored event that is not one is named as such", () => {
    const own = { ...job, caller: { identity: { kind: 'own' as const }, id: 'server', hash: '' } };
    expect(openEvent(sealEvent(own, '[1]', 'm', undefined), 'm', undefined).job.caller.identity).toEqual({ kind: 'own' });
    expect(() => openEvent(Buffer.from('garbage'), 'm', key)).toThrow('the stored event has no facts line');
    expect(() => openEvent(Buffer.from('{"v":2}\n{}'), 'm', key)).toThrow(/unknown format \(v=2\)/);
    expect(() => openEvent(Buffer.from(`${JSON.stringify({ v: 1, ns: 'a', d: '', h: [], caller: { own: true } })}\n{`), 'm', key)).toThrow(
      /body is not JSON/,
    );
  });

  it("reads the body with the endpoint's own proto-safe reader", () => {
    expect(() => openEvent(sealEvent(job, '{"__proto__": {"polluted": 1}}', 'm', key), 'm', key)).toThrow(/__proto__/);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('refuses a key shorter than 32 bytes', () => {
    expect(() => envelopeKey('short')).toThrow(/at least 32 bytes/);
    expect(storedHeaders(['x-a', '1', 'X-B', '2', 'xa', '3'])).toEqual(['x-a', '1', 'X-B', '2']);
  });
});
