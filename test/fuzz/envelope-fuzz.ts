/**
 * Fuzz target "event envelope": what an attacker on the bus could publish. Real sealed events
 * (random namespaces, bodies, headers, callers — the server's own account among them) are
 * mutated the ways a forger would: bytes flipped, cut or added anywhere; facts rewritten
 * (namespace, discriminator, id, headers, time, caller, `own`) and re-serialized; bodies swapped
 * between messages; seals moved to another message id or subject; facts lines of another
 * version; garbage of every length. Each is opened as the dispatcher opens it.
 *
 * Invariant: an untouched message opens to exactly the facts it was sealed with; any change
 * either throws an EnvelopeError with a message, or (when the bytes came out the same) opens to
 * those same facts — never to a job whose namespace, caller, identity, id or payload differ from
 * what was sealed. Nothing else is thrown. In process: no cluster, no bus.
 */
import { randomBytes } from 'node:crypto';
import { EnvelopeError, envelopeKey, openEvent, sealEvent, type MessagePlace } from '../../src/server/event-envelope.js';
import type { Prng } from '../soak/prng.js';
import type { Tally } from './tally.js';

export const ENVELOPE_TARGET = 'event envelope (forged, moved and mutated bus messages)';

interface Sealed {
  data: Buffer;
  place: MessagePlace;
  facts: string;
}

export function fuzzEnvelope(rng: Prng, tally: Tally, per: number): void {
  const t = tally.of(ENVELOPE_TARGET);
  const key = envelopeKey(Buffer.from(Array.from({ length: 32 }, () => rng.int(0, 255))));
  const otherKey = envelopeKey(randomBytes(32));
  const made: Sealed[] = [];
  for (let i = 0; i < Math.max(4, per); i++) {
    const sealed = seal(rng, key, i);
    made.push(sealed);
    // The untouched message opens to what was sealed.
    t.tried++;
    const back = tryOpen(sealed.data, sealed.place, key);
    if (back instanceof Error) tally.fail(t.target, `#${i}: an untouched message did not open: ${back.message}`);
    else if (back !== sealed.facts) tally.fail(t.target, `#${i}: an untouched message opened to other facts: ${back}`);
    else t.accepted++;
  }
  for (let i = 0; i < per * 10; i++) {
    const base = rng.pick(made);
    const { label, data, place, openWith } = mutate(rng, base, made, key, otherKey);
    t.tried++;
    const back = tryOpen(data, place, openWith);
    if (back instanceof Error) {
      if (!(back instanceof EnvelopeError))
        tally.fail(t.target, `${label}: threw ${back.name} instead of an EnvelopeError: ${back.message}`);
      else if (back.message.length < 16) tally.fail(t.target, `${label}: an EnvelopeError that says nothing: "${back.message}"`);
      else t.rejected++;
    } else if (back === base.facts && data.equals(base.data) && place.msgId === base.place.msgId && place.subject === base.place.subject) {
      t.accepted++; // the mutation changed nothing
    } else {
      tally.fail(t.target, `${label}: a changed message opened, to ${back.slice(0, 300)}`);
    }
  }
}

/** The facts a message opened to, as comparable text, or the error it threw. */
function tryOpen(data: Buffer, place: MessagePlace, key: Buffer): string | Error {
  try {
    const { job } = openEvent(data, place, key);
    return JSON.stringify([job.namespace, job.discriminator, job.eventId, job.headers, job.caller, job.payload]);
  } catch (err) {
    return err instanceof Error ? err : new Error(String(err));
  }
}

const NAMESPACES = ['team-a', 'team-b', 'kube-system', 'plugflow', 'a'];

function seal(rng: Prng, key: Buffer, i: number): Sealed {
  const namespace = rng.pick(NAMESPACES);
  const own = rng.chance(0.3);
  const token = `tok-${rng.int(0, 1e9)}-${'z'.repeat(rng.int(0, 40))}`;
  const payload = rng.pick([{}, { kind: 'order', n: i }, [1, 2, 3], 'text', { nested: { deep: [{ a: 'é' }] } }, null]);
  const job = {
    namespace,
    discriminator: rng.pick(['', 'github', 'gitlab', 'x'.repeat(rng.int(1, 60))]),
    headers: rng.chance(0.5) ? ['X-GitHub-Event', 'push', 'Authorization', `Bearer ${token}`] : [],
    ...(rng.chance(0.7) ? { eventId: `evt-${i}-${rng.int(0, 1e6)}` } : {}),
    caller: own
      ? { identity: { kind: 'own' as const }, id: 'server', hash: '' }
      : { identity: { kind: 'token' as const, token }, id: `token:${i}`, hash: `h${i}`, source: '10.0.0.1' },
  };
  const place = { msgId: `m-${i}-${rng.int(0, 1e6)}`, subject: `plugflow.events.${namespace}` };
  const data = sealEvent(job, JSON.stringify(payload), place, key);
  const facts = tryOpen(data, place, key);
  return { data, place, facts: facts instanceof Error ? `unopened: ${facts.message}` : facts };
}

function split(data: Buffer): [Buffer, Buffer, Buffer] {
  const a = data.indexOf(0x0a);
  const b = data.indexOf(0x0a, a + 1);
  return [data.subarray(0, a), data.subarray(a + 1, b), data.subarray(b + 1)];
}
const nl = Buffer.from('\n');
const joined = (p: readonly Buffer[]) => Buffer.concat(p.flatMap((x, i) => (i ? [nl, x] : [x])));

function mutate(
  rng: Prng,
  base: Sealed,
  all: readonly Sealed[],
  key: Buffer,
  otherKey: Buffer,
): { label: string; data: Buffer; place: MessagePlace; openWith: Buffer } {
  const [facts, sealPart, body] = split(base.data);
  const out = (label: string, data: Buffer, place = base.place, openWith = key) => ({ label, data, place, openWith });
  const rewriteFacts = (change: (f: Record<string, any>) => void, label: string) => {
    const f = JSON.parse(facts.toString('utf8')) as Record<string, any>;
    change(f);
    return out(label, joined([Buffer.from(JSON.stringify(f)), sealPart, body]));
  };
  switch (rng.int(0, 14)) {
    case 0: {
      const d = Buffer.from(base.data);
      const at = rng.int(0, d.length - 1);
      d[at] = d[at]! ^ (1 << rng.int(0, 7));
      return out(`bit flip at byte ${at}`, d);
    }
    case 1:
      return out('truncated', base.data.subarray(0, rng.int(0, base.data.length - 1)));
    case 2:
      return out('bytes appended', Buffer.concat([base.data, randomBytes(rng.int(1, 64))]));
    case 3:
      return rewriteFacts((f) => (f.ns = rng.pick(NAMESPACES.filter((n) => n !== f.ns))), 'facts: namespace moved');
    case 4:
      return rewriteFacts((f) => (f.caller = { id: 'server', hash: '', own: true }), 'facts: caller forged as the server (own: true)');
    case 5:
      return rewriteFacts((f) => (f.caller = { ...f.caller, id: 'token:someone-else', hash: 'other' }), 'facts: caller id changed');
    case 6:
      return rewriteFacts((f) => (f.id = `${f.id}-x`), 'facts: event id changed');
    case 7:
      return rewriteFacts((f) => (f.h = ['X-GitHub-Event', 'release']), 'facts: headers changed');
    case 8:
      return rewriteFacts((f) => (f.at = Number(f.at) - 86_400_000), 'facts: time moved a day back');
    case 9:
      return rewriteFacts((f) => (f.d = `${f.d}z`), 'facts: discriminator changed');
    case 10: {
      const other = rng.pick(all);
      return out('body swapped with another message', joined([facts, sealPart, split(other.data)[2]]));
    }
    case 11: {
      const other = rng.pick(all);
      return out('seal taken from another message', joined([facts, split(other.data)[1], body]));
    }
    case 12:
      return rng.chance(0.5)
        ? out('read under another message id', base.data, { ...base.place, msgId: `${base.place.msgId}-2` })
        : out('read from another subject', base.data, { ...base.place, subject: `plugflow.events.${rng.pick(NAMESPACES)}-moved` });
    case 13:
      return out('opened with another key', base.data, base.place, otherKey);
    default: {
      const shapes = [
        Buffer.alloc(0),
        Buffer.from('\n\n'),
        Buffer.from('{"v":1,"ns":"team-a"}\nAAAA\n{}'),
        Buffer.from(`{"v":2}\n${'A'.repeat(rng.int(0, 80))}\n{}`),
        randomBytes(rng.int(1, 4096)),
        joined([facts, Buffer.from(''), body]),
      ];
      return out('garbage or a hand-made message', rng.pick(shapes));
    }
  }
}
