/**
 * Reads a server-sent-events reply as the UI does: every message with its event name and parsed
 * data, until the test stops reading (the connection is then closed).
 */
import { Agent, request } from 'undici';
import { takeSseMessages } from '../../ui/src/sse-messages.js';

const insecure = new Agent({ connect: { rejectUnauthorized: false } });

export interface SseMessage {
  event: string;
  data: any;
}

export interface SseReader {
  status: number;
  /** Text of a refused request (not 200). */
  text: string;
  /** Waits for the first message that `match` accepts (messages before it are consumed). */
  next(match?: (m: SseMessage) => boolean, timeoutMs?: number): Promise<SseMessage>;
  /** Everything until the server ends the stream. */
  rest(timeoutMs?: number): Promise<SseMessage[]>;
  close(): void;
}

/**
 * Opens a stream as plugflow's UI does (asking for named events: `synced`, `error`), or with
 * `framing: 'peer'` as the peer's clients do (data lines only).
 */
export async function openSse(url: string, token?: string, framing: 'plugflow' | 'peer' = 'plugflow'): Promise<SseReader> {
  const abort = new AbortController();
  const res = await request(url, {
    headers: {
      accept: 'text/event-stream',
      ...(framing === 'plugflow' ? { 'x-plugflow-stream': 'v1' } : {}),
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    dispatcher: insecure,
    signal: abort.signal,
  });
  if (res.statusCode !== 200) {
    const text = await res.body.text();
    return {
      status: res.statusCode,
      text,
      next: () => Promise.reject(new Error(text)),
      rest: () => Promise.reject(new Error(text)),
      close() {},
    };
  }
  const queue: SseMessage[] = [];
  let waiting: (() => void) | undefined;
  let ended = false;
  let buffer = '';
  res.body.on('data', (chunk: Buffer) => {
    const taken = takeSseMessages(buffer + chunk.toString('utf8'));
    buffer = taken.rest;
    queue.push(...(taken.messages as SseMessage[]));
    waiting?.();
  });
  const finish = () => {
    ended = true;
    waiting?.();
  };
  res.body.on('end', finish);
  res.body.on('error', finish);
  const wait = (timeoutMs: number, what: string) =>
    new Promise<void>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`no ${what} within ${timeoutMs} ms`)), timeoutMs);
      waiting = () => {
        clearTimeout(t);
        waiting = undefined;
        resolve();
      };
    });
  return {
    status: 200,
    text: '',
    async next(match = () => true, timeoutMs = 60_000) {
      const until = Date.now() + timeoutMs;
      for (;;) {
        while (queue.length > 0) {
          const m = queue.shift()!;
          if (match(m)) return m;
        }
        if (ended) throw new Error('the stream ended before the message came');
        await wait(Math.max(1, until - Date.now()), 'matching message');
      }
    },
    async rest(timeoutMs = 60_000) {
      const until = Date.now() + timeoutMs;
      while (!ended) await wait(Math.max(1, until - Date.now()), 'end of the stream');
      return queue.splice(0);
    },
    close() {
      abort.abort();
    },
  };
}
