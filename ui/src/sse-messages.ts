/**
 * Server-sent events as the plugflow server writes them (src/server/stream/sse.ts): messages
 * separated by a blank line, an optional `event:` line, `data:` lines of JSON; comment lines
 * (heartbeats) carry no data and are skipped. Pure, so the UI and the tests read streams alike.
 */

export interface SseMessage {
  /** `message` unless the server named another (`synced`, `error`). */
  event: string;
  data: unknown;
}

/** Takes the complete messages off the front of `buffer`; `rest` is the incomplete tail to keep. */
export function takeSseMessages(buffer: string): { messages: SseMessage[]; rest: string } {
  const messages: SseMessage[] = [];
  let end: number;
  while ((end = buffer.indexOf('\n\n')) >= 0) {
    const block = buffer.slice(0, end);
    buffer = buffer.slice(end + 2);
    let event = 'message';
    let data = '';
    for (const line of block.split('\n')) {
      if (line.startsWith('event: ')) event = line.slice(7);
      else if (line.startsWith('data: ')) data += line.slice(6);
    }
    if (data) messages.push({ event, data: JSON.parse(data) });
  }
  return { messages, rest: buffer };
}
