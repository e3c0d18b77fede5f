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
const own = { ...job, caller: { identity: { kind: 'own' as const }, id: 'server', hash: '' } };
const at = (msgId: string, namespace = 'team-a') => ({ msgId, subject: `plugflow.events.${namespace}` });

/** The three parts of a stored message, as text. */
function parts(data: Buffer): [string, string, string] {
  const text = data.toString('utf8');
  const a = text.indexOf('\n');
  const b = text.indexOf('\n', a + 1);
  return [text.slice(0, a), text.slice(a + 1, b), text.slice(b + 1)];
}
const join = (p: readonly string[]) => Buffer.from(p.join('\n'));

describe('event envelope', () => {
  it('stores the body as it came, the X- headers only, and the token sealed; reading it back gives the job', () => {
    const data = sealEvent(job, '{"ref": "main"}', at('msg-1'), key);
    const text = data.toString('utf8');
    expect(text).not.toContain('secret-token');
    expect(text).not.toContain('cookie');
    expect(text.endsWith('\n{"ref": "main"}')).toBe(true);
    const { job: back } = openEvent(data, at('msg-1'), key);
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
    expect(openEvent(sealEvent(noId, '{}', at('msg-2'), key), at('msg-2'), key).job.eventId).toBe('msg-2');
  });

  it('opens only with the same key, message id and subject', () => {
    const data = sealEvent(job, '{}', at('msg-3'), key);
    expect(() => openEvent(data, at('msg-3'), envelopeKey(randomBytes(32)))).toThrow(
      /does not open with this replica's --event-bus-key-file/,
    );
    expect(() => openEvent(data, at('another-message'), key)).toThrow(EnvelopeError);
    expect(() => openEvent(data, at('msg-3', 'team-b'), key)).toThrow(/moved to another subject/);
    expect(() => openEvent(data, at('msg-3'), undefined)).toThrow(/no --event-bus-key-file/);
  });

  it("the server's own identity is sealed too: a forged `own` message does not open", () => {
    const sealed = sealEvent(own, '[1]', at('m'), key);
    expect(openEvent(sealed, at('m'), key).job.caller.identity).toEqual({ kind: 'own' });
    // A forger who reads the bus writes the facts of an own message, without the key.
    const [facts, , body] = parts(sealed);
    const forgedSeal = randomBytes(28).toString('base64');
    expect(() => openEvent(join([facts, forgedSeal, body]), at('m'), key)).toThrow(/forged, changed/);
    // … or takes a token message and makes it the server's own.
    const [tokenFacts, tokenSeal, tokenBody] = parts(sealEvent(job, '{}', at('m2'), key));
    const asOwn = tokenFacts.replace('"caller":{', '"caller":{"own":true,');
    expect(() => openEvent(join([asOwn, tokenSeal, tokenBody]), at('m2'), key)).toThrow(/forged, changed/);
  });

  it('binds every fact the dispatch trusts: namespace, discriminator, id, headers, time, caller and the body', () => {
    const [facts, seal, body] = parts(sealEvent(job, '{"ref":"main"}', at('m'), key));
    const changes: [string, string][] = [
      ['"ns":"team-a"', '"ns":"team-b"'],
      ['"d":"github"', '"d":"gitlab"'],
      ['"id":"delivery-7"', '"id":"delivery-8"'],
      ['"push"', '"tag"'],
      ['"id":"token:abc"', '"id":"token:def"'],
      ['"source":"10.0.0.1"', '"source":"10.0.0.2"'],
    ];
    for (const [from, to] of changes) {
      expect(facts).toContain(from);
      expect(() => openEvent(join([facts.replace(from, to), seal, body]), at('m'), key), `${from} → ${to}`).toThrow(/forged, changed/);
    }
    expect(() => openEvent(join([facts.replace(/"at":\d+/, '"at":1'), seal, body]), at('m'), key)).toThrow(/forged, changed/);
    expect(() => openEvent(join([facts, seal, '{"ref":"evil"}']), at('m'), key)).toThrow(/forged, changed/);
    // A sealed token moved to another message's facts.
    const [otherFacts, , otherBody] = parts(sealEvent({ ...job, namespace: 'team-b' }, '{}', at('m', 'team-b'), key));
    expect(() => openEvent(join([otherFacts, seal, otherBody]), at('m', 'team-b'), key)).toThrow(/forged, changed/);
  });

  it('opens only the canonical spelling of a seal: a stray character or spare bits make it fail', () => {
    const data = sealEvent(job, '{}', at('m'), key);
    const [facts, seal, body] = parts(data);
    // Node's base64 reader would skip the '*' and decode the same bytes.
    const stray = `${seal.slice(0, 10)}*${seal.slice(10)}`;
    expect(Buffer.from(stray, 'base64').equals(Buffer.from(seal, 'base64'))).toBe(true);
    expect(() => openEvent(join([facts, stray, body]), at('m'), key)).toThrow('the seal of the stored event is not canonical base64');
  });

  it('names what is wrong with a message that is not a sealed event', () => {
    expect(() => openEvent(Buffer.from('garbage'), at('m'), key)).toThrow('the stored event has no facts line');
    expect(() => openEvent(Buffer.from('{"v":3}\n\n{}'), at('m'), key)).toThrow(/unknown format \(v=3\)/);
    expect(() => openEvent(Buffer.from('{"v":2,"ns":"team-a"}\n{}'), at('m'), key)).toThrow(/no seal line/);
    expect(() => openEvent(Buffer.from('{"v":2,"ns":"team-a"}\nAAAA\n{}'), at('m'), key)).toThrow(/truncated/);
    // The format before this one sealed only the token: such a message is never dispatched.
    const v1 = `${JSON.stringify({ v: 1, ns: 'team-a', d: '', id: 'x', h: [], at: 1, caller: { id: 'server', hash: '', own: true } })}\n{}`;
    expect(() => openEvent(Buffer.from(v1), at('m'), key)).toThrow(/written by an earlier plugflow.*not dispatched/);
  });

  it("reads the body with the endpoint's own proto-safe reader", () => {
    expect(() => openEvent(sealEvent(job, '{"__proto__": {"polluted": 1}}', at('m'), key), at('m'), key)).toThrow(/__proto__/);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('refuses a key shorter than 32 bytes', () => {
    expect(() => envelopeKey('short')).toThrow(/at least 32 bytes/);
    expect(storedHeaders(['x-a', '1', 'X-B', '2', 'xa', '3'])).toEqual(['x-a', '1', 'X-B', '2']);
  });
});
