/**
 * A watch response body as the API server streams it: one JSON event a line. Every line reaches
 * `onEvent` (BOOKMARK and ERROR events too; the caller decides what they mean); a line that is not
 * JSON or a broken transport rejects with ApiError; an aborted watch just ends.
 */
import { ApiError, transportMessage } from './errors.js';
import type { WatchEvent } from './request-options.js';

export async function readWatchEvents(
  body: AsyncIterable<unknown>,
  onEvent: (e: WatchEvent) => void,
  request: string,
  signal: AbortSignal,
): Promise<void> {
  let buffered = '';
  try {
    for await (const chunk of body) {
      buffered += (chunk as Buffer).toString('utf8');
      let nl: number;
      while ((nl = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, nl).trim();
        buffered = buffered.slice(nl + 1);
        if (!line) continue;
        let event: WatchEvent;
        try {
          event = JSON.parse(line) as WatchEvent;
        } catch {
          throw new ApiError(0, '', `malformed watch line: ${line.slice(0, 200)}`, request);
        }
        onEvent(event);
      }
    }
  } catch (err) {
    if (signal.aborted) return;
    if (err instanceof ApiError) throw err;
    throw new ApiError(0, '', transportMessage(err), request);
  }
}
