/**
 * An event's id, and the workflow names derived from it, so that one event gives one workflow per
 * binding however often it arrives: a sender retrying a delivery it got no answer for, two server
 * replicas both handling it, a retry after a lost connection. The id comes from the binding's
 * `spec.event.id` expression when it has one, else from the first of these request headers:
 *
 *   X-Event-Id          plugflow's own, for any sender
 *   X-GitHub-Delivery   GitHub's delivery id (the same on a redelivery)
 *   Ce-Id               a CloudEvent in binary mode
 *
 * The workflow is then named `<template>-<13 characters of SHA-256(namespace, binding, sender, id)>`,
 * where the sender is the user the API server knows the caller's token as (`server` in
 * --auth-mode=server): ids are the sender's own, so one sender can never take another's by
 * guessing them. The API server refuses a second workflow of that name (409), and that refusal
 * is the deduplication — held by etcd, so it holds across replicas and restarts, for as long as
 * the first workflow exists — once the existing workflow's digest annotation (`eventDigest`:
 * namespace, binding, sender, id and payload) shows it is the same event; a workflow that only
 * has the name is a clash, reported. A binding that names its workflows itself
 * (`submit.metadata.name`) keeps its name, with the same check. Pure.
 */
import { createHash } from 'node:crypto';
import { MAX_GENERATED_NAME } from './workflow-from-event.js';

/** The headers an id is read from, in order (lower case, as Node gives raw header names any case). */
export const EVENT_ID_HEADERS = ['x-event-id', 'x-github-delivery', 'ce-id'] as const;

/** Longest id accepted (a UUID is 36; GitHub's delivery ids are UUIDs). */
export const MAX_EVENT_ID_LENGTH = 256;

/** Thrown for an id that is empty, too long or holds control characters. */
export class EventIdError extends Error {
  override readonly name = 'EventIdError';
}

/** The id of the first id header present (`rawHeaders` is Node's flat name/value list); undefined when none. */
export function eventIdFromHeaders(rawHeaders: readonly string[]): string | undefined {
  // One pass over the headers (this runs on every event): the best-ranked id header seen wins.
  let rank: number = EVENT_ID_HEADERS.length;
  let found: { name: string; value: string } | undefined;
  for (let i = 0; i + 1 < rawHeaders.length && rank > 0; i += 2) {
    const name = rawHeaders[i]!.toLowerCase();
    const r = (EVENT_ID_HEADERS as readonly string[]).indexOf(name);
    if (r >= 0 && r < rank) {
      rank = r;
      found = { name, value: rawHeaders[i + 1]! };
    }
  }
  return found && checkEventId(found.value.trim(), `header ${found.name}`);
}

/** `id` when it can be one; otherwise EventIdError naming `where` (the value is not shown). */
export function checkEventId(id: string, where: string): string {
  if (id.length === 0) throw new EventIdError(`${where} is empty: an event id needs at least one character`);
  if (id.length > MAX_EVENT_ID_LENGTH)
    throw new EventIdError(`${where} is ${id.length} characters long: an event id has at most ${MAX_EVENT_ID_LENGTH}`);
  if (/[\u0000-\u001f\u007f]/.test(id)) throw new EventIdError(`${where} holds a control character`);
  return id;
}

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';
const HASH_CHARS = 13; // 65 bits: a clash between two ids of one binding is out of reach

/**
 * The name of the workflow a binding submits for an event id: the template name (cut so that the
 * whole stays within 63 characters), then 13 base-32 characters of SHA-256 over the namespace,
 * the binding, the sender and the id — the same on every replica and every retry, different per
 * binding and per sender.
 */
export function workflowNameForEvent(templateName: string, namespace: string, binding: string, sender: string, id: string): string {
  const digest = createHash('sha256').update(`${namespace}\u0000${binding}\u0000${sender}\u0000${id}`).digest();
  let hash = '';
  for (let i = 0; i < HASH_CHARS; i++) hash += BASE32[digest[i]! & 31];
  const tail = `-${hash}`;
  const head = templateName.slice(0, MAX_GENERATED_NAME - tail.length).replace(/[-.]+$/, '');
  return `${head}${tail}`;
}

/**
 * What identifies one event to one binding: SHA-256 (32 hex digits) over the namespace, the
 * binding, the sender, the id and the payload (its JSON). A repeat of the event — a retry, a
 * second delivery — has the same digest; another event that came by the same name has not.
 */
export function eventDigest(namespace: string, binding: string, sender: string, id: string, payload: unknown): string {
  return createHash('sha256')
    .update(`${namespace}\u0000${binding}\u0000${sender}\u0000${id}\u0000`)
    .update(JSON.stringify(payload) ?? 'null')
    .digest('hex')
    .slice(0, 32);
}
