/**
 * Calls to the plugflow server, always with the bearer token the user gave (kept in this tab's
 * sessionStorage only, never in localStorage or a cookie). Errors carry the server's message,
 * which names what is wrong; 401 and 403 are told apart so the UI can say "log in again" or
 * "you may not".
 */
import { takeSseMessages } from './sse-messages.js';

const TOKEN_KEY = 'plugflow.token';

export function token(): string {
  return sessionStorage.getItem(TOKEN_KEY) ?? '';
}

export function setToken(t: string): void {
  if (t) sessionStorage.setItem(TOKEN_KEY, t);
  else sessionStorage.removeItem(TOKEN_KEY);
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** What to tell the user about a failed call. */
export function explain(err: unknown): string {
  if (err instanceof ApiError) {
    if (err.status === 401) return `Not logged in, or the token was refused: ${err.message}`;
    if (err.status === 403) return `Not allowed: ${err.message}`;
    return err.message;
  }
  return err instanceof Error ? err.message : String(err);
}

function headers(json: boolean): Record<string, string> {
  const h: Record<string, string> = { accept: 'application/json' };
  const t = token();
  if (t) h.authorization = `Bearer ${t}`;
  if (json) h['content-type'] = 'application/json';
  return h;
}

async function failure(res: Response): Promise<ApiError> {
  const text = await res.text().catch(() => '');
  let message = text || res.statusText;
  try {
    const body = JSON.parse(text) as { message?: unknown };
    if (typeof body.message === 'string') message = body.message;
  } catch {
    // not JSON: the text as it is
  }
  return new ApiError(res.status, message);
}

/**
 * Requests the server has not answered (no response headers) for SLOW_MS: the app shows them, so
 * a browser out of connections to the server or a server that hangs is visible instead of a page
 * that silently never loads.
 */
export const SLOW_MS = 8_000;
const unanswered = new Map<number, string>();
const unansweredWatchers = new Set<(requests: string[]) => void>();
let nextRequest = 0;

export function onUnanswered(watch: (requests: string[]) => void): () => void {
  unansweredWatchers.add(watch);
  return () => unansweredWatchers.delete(watch);
}

/** Notes a request as sent; the returned function notes its answer (or failure). */
function sent(label: string): () => void {
  const id = nextRequest++;
  const notify = () => {
    const requests = [...unanswered.values()];
    for (const w of unansweredWatchers) w(requests);
  };
  const timer = setTimeout(() => {
    unanswered.set(id, label);
    notify();
  }, SLOW_MS);
  return () => {
    clearTimeout(timer);
    if (unanswered.delete(id)) notify();
  };
}

async function answered(label: string, request: Promise<Response>): Promise<Response> {
  const done = sent(label);
  try {
    return await request;
  } finally {
    done();
  }
}

export async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await answered(
    `${method} ${path}`,
    fetch(path, {
      method,
      headers: headers(body !== undefined),
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
  );
  if (!res.ok) throw await failure(res);
  return (await res.json()) as T;
}

export const get = <T>(path: string) => call<T>('GET', path);

/**
 * Reads a server-sent-events stream (fetch, since EventSource cannot send a token) and calls
 * `onResult` with each message's `result` (`onSynced` at `event: synced`, once a watch's initial list is complete). Resolves when the stream ends; rejects with ApiError
 * when the server refuses it or sends `event: error`.
 */
export async function stream(path: string, onResult: (result: unknown) => void, signal: AbortSignal, onSynced?: () => void): Promise<void> {
  const both = AbortSignal.any([signal, leaving.signal]);
  // x-plugflow-stream: named events (synced, error) besides the peer's data lines (src/server/stream/sse.ts).
  const res = await answered(
    `GET ${path}`,
    fetch(path, { headers: { ...headers(false), accept: 'text/event-stream', 'x-plugflow-stream': 'v1' }, signal: both }),
  );
  if (!res.ok || !res.body) throw await failure(res);
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    const taken = takeSseMessages(buffer + value);
    buffer = taken.rest;
    for (const { event, data } of taken.messages) {
      const parsed = data as { result?: unknown; code?: number; message?: string };
      if (event === 'synced') onSynced?.();
      if (event !== 'message' && event !== 'error') continue;
      if (event === 'error') throw new ApiError(parsed.code ?? 500, parsed.message ?? 'the stream failed');
      onResult(parsed.result);
    }
  }
}

export const enc = encodeURIComponent;

/**
 * Streams end when the page is left. The browser keeps a left page in its back/forward cache
 * with its fetches open, and it allows six connections per server: after six reloads of a page
 * with a live stream, Chromium could not load the UI at all until the cache let go. So every
 * stream is aborted on `pagehide`, and a page brought back from that cache is loaded afresh.
 */
const leaving = new AbortController();
addEventListener('pagehide', () => leaving.abort());
addEventListener('pageshow', (e) => {
  if (e.persisted) location.reload();
});
