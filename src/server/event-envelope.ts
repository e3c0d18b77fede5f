/**
 * An accepted event as the event bus stores it (event-bus.ts), and back.
 *
 * The message is three parts: one JSON line of facts, one line with the seal, then the request
 * body exactly as it arrived. The body is not serialized twice on the hot path, and the
 * dispatching replica parses it with the same proto-safe reader the endpoint used (parseUserJson).
 *
 * Everything the dispatcher trusts is sealed. The seal is AES-256-GCM under the key every server
 * replica holds (`--event-bus-key-file`, required with a bus): its plaintext is the caller's
 * bearer token (empty for the server's own account), and its associated data binds the message
 * id, the subject the message was published on, the facts line byte for byte (namespace,
 * discriminator, event id, headers, time, and who the caller is, `own` included) and the SHA-256
 * of the body. A message whose seal does not open — forged, moved to another namespace or
 * subject, its facts or body changed, or sealed with another key — is never dispatched: the bus
 * sends it to the dead letters with the reason.
 *
 * What is stored and what is not:
 * - only the `X-` headers (the binding's `metadata` is made from them alone); Authorization,
 *   cookies and every other header stay out of the bus;
 * - the caller's token only inside the seal. Logs and the dead-letter stream see only `caller.id`.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { parseUserJson } from '../api/index.js';
import type { Caller } from './auth.js';
import type { EventJob } from './dispatch.js';

/** The version of the format below (an earlier one sealed only the token: its messages are dead-lettered). */
const VERSION = 2;
const AAD_LABEL = 'plugflow.event.v2';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** What the first line of a stored event holds; all of it is bound by the seal. */
interface EnvelopeFacts {
  v: typeof VERSION;
  ns: string;
  d: string;
  /** The event's id: the sender's (event-id.ts) or, without one, the bus message id. */
  id: string;
  /** `X-` headers as name/value pairs, flattened like `req.rawHeaders`. */
  h: string[];
  /** Epoch milliseconds when the request arrived. */
  at: number;
  /** Who sent it; the token itself is the seal's plaintext. */
  caller: { id: string; hash: string; source?: string; own?: true };
}

/** An event read back from the bus, with what the dispatching replica needs beyond the job. */
export interface OpenedEvent {
  job: EventJob;
  /** Epoch milliseconds when the accepting replica received it (sealed, so it can be trusted). */
  acceptedAt: number;
}

/** Where a message was read: its bus message id and the subject it was published on. */
export interface MessagePlace {
  msgId: string;
  subject: string;
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

/** The bytes to publish on `place.subject` for an event whose body arrived as `body` (already checked to be JSON). */
export function sealEvent(job: Omit<EventJob, 'payload' | 'receivedAt'>, body: string, place: MessagePlace, key: Buffer): Buffer {
  if (!key) throw new EnvelopeError('no --event-bus-key-file: an event cannot be stored on the bus unsealed');
  const caller: EnvelopeFacts['caller'] = { id: job.caller.id, hash: job.caller.hash };
  if (job.caller.source) caller.source = job.caller.source;
  const identity = job.caller.identity;
  let secret: string;
  if (identity.kind === 'own') {
    caller.own = true;
    secret = '';
  } else if (identity.kind === 'token') secret = identity.token;
  else throw new EnvelopeError(`a ${identity.kind} identity cannot send events`);
  const facts: EnvelopeFacts = {
    v: VERSION,
    ns: job.namespace,
    d: job.discriminator,
    id: job.eventId ?? place.msgId,
    h: storedHeaders(job.headers),
    at: Date.now(),
    caller,
  };
  const factsLine = Buffer.from(JSON.stringify(facts), 'utf8');
  const bodyBytes = Buffer.from(body, 'utf8');
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(associatedData(place, factsLine, bodyBytes));
  const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  const seal = Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64');
  return Buffer.concat([factsLine, NL, Buffer.from(seal, 'latin1'), NL, bodyBytes]);
}

/**
 * Reads a stored event back, or throws an EnvelopeError naming what is wrong (the message then
 * goes to the dead letters). Nothing of the message is believed before its seal opened.
 */
export function openEvent(data: Uint8Array, place: MessagePlace, key: Buffer | undefined): OpenedEvent {
  const bytes = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const nl1 = bytes.indexOf(0x0a);
  if (nl1 < 0) throw new EnvelopeError('the stored event has no facts line');
  const nl2 = bytes.indexOf(0x0a, nl1 + 1);
  const factsLine = bytes.subarray(0, nl1);
  const version = /^\{"v":(\d+)[,}]/.exec(factsLine.subarray(0, 16).toString('latin1'))?.[1];
  if (version !== String(VERSION))
    throw new EnvelopeError(
      version === '1'
        ? 'the stored event was written by an earlier plugflow, whose envelope is not sealed whole: it is not dispatched (resend it)'
        : `the stored event has an unknown format (v=${version ?? 'none'})`,
    );
  if (nl2 < 0) throw new EnvelopeError('the stored event has no seal line');
  if (!key) throw new EnvelopeError('this replica has no --event-bus-key-file, so no stored event can be opened');
  const sealText = bytes.subarray(nl1 + 1, nl2).toString('latin1');
  const seal = Buffer.from(sealText, 'base64');
  // Node's base64 reader skips stray characters and ignores a last character's spare bits: only
  // the one canonical spelling of the seal is accepted, so no byte of a message can change
  // without it failing to open (a message is never malleable, even into the same event).
  if (seal.toString('base64') !== sealText) throw new EnvelopeError('the seal of the stored event is not canonical base64: it was changed');
  const bodyBytes = bytes.subarray(nl2 + 1);
  if (seal.length < IV_BYTES + TAG_BYTES) throw new EnvelopeError('the seal of the stored event is truncated');
  let secret: string;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, seal.subarray(0, IV_BYTES));
    decipher.setAAD(associatedData(place, factsLine, bodyBytes));
    decipher.setAuthTag(seal.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    secret = Buffer.concat([decipher.update(seal.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
  } catch {
    throw new EnvelopeError(
      "the stored event's seal does not open with this replica's --event-bus-key-file: it was forged, changed, moved to another subject, or sealed with another key",
    );
  }
  // Sealed by a replica, so well-formed; read with the proto-safe reader all the same.
  const facts = parseUserJson(factsLine.toString('utf8'), 'the stored event') as EnvelopeFacts;
  if (!place.subject.endsWith(`.${facts.ns}`))
    throw new EnvelopeError(`the stored event names namespace "${facts.ns}" but was read from subject ${place.subject}`);
  let payload: unknown;
  try {
    payload = parseUserJson(bodyBytes.toString('utf8'), 'the event body');
  } catch (err) {
    throw new EnvelopeError(`the stored event body is not JSON: ${(err as Error).message}`);
  }
  const c = facts.caller;
  const identity: Caller['identity'] = c.own ? { kind: 'own' } : { kind: 'token', token: secret };
  if (!c.own && secret === '') throw new EnvelopeError('the stored event names no caller');
  const caller: Caller = { identity, id: c.id, hash: c.hash, ...(c.source ? { source: c.source } : {}) };
  return {
    job: {
      namespace: facts.ns,
      discriminator: facts.d,
      payload,
      headers: facts.h,
      eventId: facts.id,
      caller,
      // The dispatch measures event → workflow from receivedAt on its own clock.
      receivedAt: performance.now() - Math.max(0, Date.now() - facts.at),
    },
    acceptedAt: facts.at,
  };
}

const NL = Buffer.from('\n');

/** What the seal binds besides the token: where the message is, its facts line and its body's digest. */
function associatedData(place: MessagePlace, factsLine: Buffer, body: Buffer): Buffer {
  const digest = createHash('sha256').update(body).digest();
  return Buffer.concat([Buffer.from(`${AAD_LABEL}\0${place.msgId}\0${place.subject}\0`, 'utf8'), factsLine, Buffer.from('\0'), digest]);
}
