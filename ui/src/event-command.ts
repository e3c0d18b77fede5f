/**
 * The `plugflow event send` command that sends what the event tester just tested: the same
 * namespace, discriminator, payload and headers, each quoted for a POSIX shell so any character
 * (a `'` in the payload, spaces, `$`) reaches the server as typed. Pure: tested beside.
 */

/** One shell word: single-quoted, a `'` inside written as `'\''`. */
export function shellQuote(s: string): string {
  return /^[A-Za-z0-9_./:=@%+-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/** The payload as it will be sent: compact JSON when it parses (same value), else the text as typed. */
function compact(payload: string): string {
  try {
    return JSON.stringify(JSON.parse(payload));
  } catch {
    return payload;
  }
}

/** Header lines ("Name: value") with a name, in order. */
function headerLines(text: string): string[] {
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.includes(':') && l.indexOf(':') > 0);
}

export function eventSendCommand(namespace: string, discriminator: string, payload: string, headers: string): string {
  const words = ['plugflow', 'event', 'send', shellQuote(namespace), shellQuote(discriminator), '--data', shellQuote(compact(payload))];
  for (const h of headerLines(headers)) words.push('-H', shellQuote(h));
  return words.join(' ');
}
