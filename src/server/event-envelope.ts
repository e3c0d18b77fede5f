/**
 * An accepted event as the event bus stores it (event-bus.ts), and back.
 *
 * The message is one JSON line of facts, a newline, then the request body exactly as it arrived:
 * the body is not serialized twice on the hot path, and the dispatching replica parses it with
 * the same proto-safe reader the endpoint used (parseUserJson).
 *
 * What is stored and what is not:
 * - only the `X-` headers (the binding's `metadata` is made from them alone); Authorization,
 *   cookies and every other header stay out of the bus;
 * - the caller's bearer token is needed to dispatch with the caller's rights (client auth mode),
 *   so it is stored sealed: AES-256-GCM under the key every server replica holds
 *   (`--event-bus-key-file`), with the message id as associated data, so a sealed token cannot
 *   be moved to another message. Logs and the dead-letter stream see only `caller.id`.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { parseUserJson } from '../api/index.js';
import type { Caller } from './auth.js';
import type { EventJob } from './dispatch.js';

/** What the first line of a stored event holds. */
interface EnvelopeFacts {
  v: 1;
  ns: string;
  d: string;
  /** The event's id: the sender's (event-id.ts) or, without one, the bus message id. */
  id: string;
  /** `X-` headers as name/value pairs, flattened like `req.rawHeaders`. */
  h: string[];
  /** Epoch milliseconds when the request arrived. */
  at: number;
  caller: { id: string; hash: string; source?: string; own?: true; sealed?: string };
}

/** An event read back from the bus, with what the dispatching replica needs beyond the job. */
export interface OpenedEvent {
  job: EventJob;
  /** Epoch milliseconds when the accepting replica received it. */
  acceptedAt: number;
}

export class EnvelopeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EnvelopeError';
  }
}

/** Turns the contents of `--event-bus-key-file` into the AES-256 key (any length of secret ≥ 32 bytes). */
export function envelopeKey(secret: Buffer | string): Buffer {
  const raw = typeof secret === 'string' ? Buffer.from(secret.trim(), 'utf8') : secret;
  if (raw.length < 32) throw new EnvelopeError(`the event bus key must hold at least 32 bytes of secret (it holds ${raw.length})`);
  return createHash('sha256').update(raw).digest();
}

/** Only `X-` headers go to the bus (expr/event.ts makes `metadata` from those alone). */
export function storedHeaders(raw: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i];
    if ((name.charCodeAt(0) | 32) === 120 /* x */ && name.charCodeAt(1) === 45 /* - */) out.push(name, raw[i + 1]);
  }
  return out;
}

/** The bytes to publish for an event whose body arrived as `body` (already checked to be JSON). */
export function sealEvent(job: Omit<EventJob, 'payload' | 'receivedAt'>, body: string, msgId: string, key: Buffer | undefined): Buffer {
  const caller: EnvelopeFacts['caller'] = { id: job.caller.id, hash: job.caller.hash };
  if (job.caller.source) caller.source = job.caller.source;
  const identity = job.caller.identity;
  if (identity.kind === 'own') caller.own = true;
  else if (identity.kind === 'token') {
    if (!key) throw new EnvelopeError("no --event-bus-key-file: a caller's token cannot be stored for dispatch");
    caller.sealed = seal(identity.token, key, msgId);
  } else throw new EnvelopeError(`a ${identity.kind} identity cannot send events`);
  const facts: EnvelopeFacts = {
    v: 1,
    ns: job.namespace,
    d: job.discriminator,
    id: job.eventId ?? msgId,
    h: storedHeaders(job.headers),
    at: Date.now(),
    caller,
  };
  return Buffer.from(`${JSON.stringify(facts)}\n${body}`, 'utf8');
}

/** Reads a stored event back; an EnvelopeError names what is wrong (the message then goes to the dead letters). */
export function openEvent(data: Uint8Array, msgId: string, key: Buffer | undefined): OpenedEvent {
  const text = Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8');
  const nl = text.indexOf('\n');
  if (nl < 0) throw new EnvelopeError('the stored event has no facts line');
  let facts: EnvelopeFacts;
  try {
    facts = parseUserJson(text.slice(0, nl), 'the stored event') as EnvelopeFacts;
  } catch (err) {
    throw new EnvelopeError(`the stored event's facts are not JSON: ${(err as Error).message}`);
  }
  if (facts?.v !== 1 || typeof facts.ns !== 'string' || typeof facts.d !== 'string' || !Array.isArray(facts.h) || !facts.caller)
    throw new EnvelopeError(`the stored event has an unknown format (v=${String(facts?.v)})`);
  let payload: unknown;
  try {
    payload = parseUserJson(text.slice(nl + 1), 'the event body');
  } catch (err) {
    throw new EnvelopeError(`the stored event body is not JSON: ${(err as Error).message}`);
  }
  const c = facts.caller;
  let identity: Caller['identity'];
  if (c.own) identity = { kind: 'own' };
  else if (typeof c.sealed === 'string') {
    if (!key) throw new EnvelopeError('the event carries a sealed token and this replica has no --event-bus-key-file');
    identity = { kind: 'token', token: unseal(c.sealed, key, msgId) };
  } else throw new EnvelopeError('the stored event names no caller');
  const caller: Caller = { identity, id: String(c.id), hash: String(c.hash), ...(c.source ? { source: String(c.source) } : {}) };
  const acceptedAt = typeof facts.at === 'number' ? facts.at : Date.now();
  return {
    job: {
      namespace: facts.ns,
      discriminator: facts.d,
      payload,
      headers: facts.h.map(String),
      eventId: String(facts.id),
      caller,
      // The dispatch measures event → workflow from receivedAt on its own clock.
      receivedAt: performance.now() - Math.max(0, Date.now() - acceptedAt),
    },
    acceptedAt,
  };
}

function seal(token: string, key: Buffer, msgId: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(msgId, 'utf8'));
  const body = Buffer.concat([cipher.update(token, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64');
}

function unseal(sealed: string, key: Buffer, msgId: string): string {
  const raw = Buffer.from(sealed, 'base64');
  if (raw.length < 29) throw new EnvelopeError('the sealed token is truncated');
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
    decipher.setAAD(Buffer.from(msgId, 'utf8'));
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
  } catch {
    throw new EnvelopeError("the sealed token does not open with this replica's --event-bus-key-file (another key, or a tampered message)");
  }
}
