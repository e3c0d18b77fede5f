/**
 * HTTP/1.1 by hand over a TCP socket: the fuzz needs requests no client library would send
 * (two Content-Lengths, a bad chunk size, CR/LF in a header, a request line in pieces), and it
 * must see exactly what the server answered, including a bare close.
 */
import { connect } from 'node:net';

export interface RawRequest {
  method: string;
  path: string;
  /** Header lines as they go on the wire, in order (duplicates allowed). */
  headers: [string, string][];
  body?: Buffer;
  /** Send the body in pieces this many ms apart (a slow client). */
  trickleMs?: number;
  /** Bytes to send instead of the request built from the fields above. */
  raw?: Buffer;
  /** Half-close our side after sending (the server sees the end of the stream). */
  endAfterWrite?: boolean;
}

export interface RawResponse {
  /** 0 when the server closed without a status line. */
  status: number;
  headers: Record<string, string>;
  body: string;
  /** The server never answered within the time limit. */
  hung: boolean;
  error?: string;
}

export function encodeRequest(r: RawRequest): Buffer {
  if (r.raw) return r.raw;
  const head = `${r.method} ${r.path} HTTP/1.1\r\n${r.headers.map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n`;
  return Buffer.concat([Buffer.from(head, 'latin1'), r.body ?? Buffer.alloc(0)]);
}

/** `localAddress`: the source address (any of 127/8), to be another client for the per-source caps. */
export function send(port: number, r: RawRequest, timeoutMs = 15_000, localAddress?: string): Promise<RawResponse> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port, ...(localAddress ? { localAddress } : {}) });
    const chunks: Buffer[] = [];
    let done = false;
    const finish = (hung: boolean, error?: string) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ ...parse(Buffer.concat(chunks)), hung, ...(error ? { error } : {}) });
    };
    const timer = setTimeout(() => finish(true), timeoutMs);
    socket.on('data', (c: Buffer) => {
      chunks.push(c);
      if (complete(Buffer.concat(chunks), r.method === 'HEAD')) finish(false);
    });
    socket.on('end', () => finish(false));
    socket.on('close', () => finish(false));
    socket.on('error', (err) => finish(false, err.message));
    const send = async () => {
      const bytes = encodeRequest(r);
      // In pieces, like a careful client: once the server has answered (an early 413, say),
      // stop sending and read the answer instead of writing into a closing connection.
      const piece = r.trickleMs ? 16 : 64 * 1024;
      for (let i = 0; i < bytes.length && !done && chunks.length === 0; i += piece) {
        const more = socket.write(bytes.subarray(i, i + piece));
        if (r.trickleMs) await new Promise((res) => setTimeout(res, r.trickleMs));
        else if (!more) await new Promise((res) => (socket.once('drain', res), socket.once('close', res)));
      }
      if (r.endAfterWrite && !done) socket.end();
    };
    socket.on('connect', () => {
      send().catch((err: Error) => finish(false, err.message));
    });
  });
}

/** The bytes after any interim (1xx, e.g. 100 Continue) responses. */
function skipInterim(buf: Buffer): Buffer {
  while (/^HTTP\/1\.[01] 1\d\d/.test(buf.subarray(0, 16).toString('latin1'))) {
    const end = buf.indexOf('\r\n\r\n');
    if (end < 0) return buf;
    buf = buf.subarray(end + 4);
  }
  return buf;
}

/** Whether a whole response (by Content-Length or final chunk) has arrived. */
function complete(all: Buffer, headOnly: boolean): boolean {
  const buf = skipInterim(all);
  const end = buf.indexOf('\r\n\r\n');
  if (end < 0) return false;
  const head = buf.subarray(0, end).toString('latin1').toLowerCase();
  if (headOnly || /^http\/1\.[01] (204|304)/.test(head)) return true;
  const cl = /\r\ncontent-length:\s*(\d+)/.exec(head);
  if (cl) return buf.length - end - 4 >= Number(cl[1]);
  if (/\r\ntransfer-encoding:\s*chunked/.test(head)) return buf.subarray(end).includes('\r\n0\r\n\r\n');
  return false;
}

function parse(all: Buffer): Omit<RawResponse, 'hung'> {
  const buf = skipInterim(all);
  const text = buf.toString('utf8');
  const m = /^HTTP\/1\.[01] (\d{3})/.exec(text);
  if (!m) return { status: 0, headers: {}, body: text.slice(0, 500) };
  const end = text.indexOf('\r\n\r\n');
  const headers: Record<string, string> = {};
  for (const line of text
    .slice(0, end < 0 ? undefined : end)
    .split('\r\n')
    .slice(1)) {
    const i = line.indexOf(':');
    if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
  }
  const rest = end < 0 ? Buffer.alloc(0) : buf.subarray(Buffer.byteLength(text.slice(0, end + 4)));
  const length = Number(headers['content-length']);
  // A second response on the same connection (the parser's own 400 after ours) is not this body.
  let body = (Number.isInteger(length) ? rest.subarray(0, length) : rest).toString('utf8');
  if (/chunked/i.test(headers['transfer-encoding'] ?? '')) body = dechunk(body);
  return { status: Number(m[1]), headers, body };
}

function dechunk(s: string): string {
  let out = '';
  let i = 0;
  for (;;) {
    const nl = s.indexOf('\r\n', i);
    if (nl < 0) return out;
    const size = Number.parseInt(s.slice(i, nl), 16);
    if (!size) return out;
    out += s.slice(nl + 2, nl + 2 + size);
    i = nl + 2 + size + 2;
  }
}
