/**
 * Cuts a log's bytes into the messages of a log stream, holding a bounded amount whatever the log
 * looks like. A log without newlines (a binary dump, a progress bar redrawn with `\r`) once grew the
 * server's heap to 755 MiB: the text after the last newline was kept whole until the next one.
 *
 * Here a line is sent in pieces of at most `pieceChars` as soon as a piece is full, so no more than
 * one piece is ever held; a line longer than `maxLineChars` is cut there, the rest of it (up to its
 * newline) is dropped and counted, and one more message says so. Pure: the caller sends what
 * `push` and `end` return.
 */
import { StringDecoder } from 'node:string_decoder';

export interface LineLimits {
  /** Longest message: a longer line goes out in pieces of this size. */
  pieceChars: number;
  /** Longest line kept: beyond it the line is cut and the rest dropped, with a note. */
  maxLineChars: number;
}

export const DEFAULT_LINE_LIMITS: LineLimits = { pieceChars: 64 * 1024, maxLineChars: 1024 * 1024 };

/** The note that ends a cut line, naming how much of it was dropped. */
export function cutNote(dropped: number, limits: LineLimits): string {
  return `[plugflow: this line was longer than ${limits.maxLineChars} characters; the last ${dropped} were not sent]`;
}

export class LogLines {
  private readonly text = new StringDecoder('utf8'); // a character may be cut between two chunks
  private piece = '';
  /** Characters of the current line already sent (whole pieces) or dropped. */
  private lineSoFar = 0;
  private dropped = 0;

  constructor(private readonly limits: LineLimits = DEFAULT_LINE_LIMITS) {
    if (limits.pieceChars < 1 || limits.maxLineChars < limits.pieceChars) {
      throw new Error(`log line limits: pieceChars (${limits.pieceChars}) must be ≥ 1 and ≤ maxLineChars (${limits.maxLineChars})`);
    }
  }

  /** The messages that a chunk of the log completes. */
  push(chunk: Buffer): string[] {
    return this.take(this.text.write(chunk));
  }

  /** The messages left when the log ends (its last line, when it had no newline). */
  end(): string[] {
    const out = this.take(this.text.end());
    if (this.piece || this.dropped) this.endLine(out);
    return out;
  }

  private take(text: string): string[] {
    const out: string[] = [];
    let from = 0;
    while (from < text.length) {
      const nl = text.indexOf('\n', from);
      const stop = nl < 0 ? text.length : nl;
      this.add(text.slice(from, stop), out);
      if (nl < 0) break;
      this.endLine(out);
      from = nl + 1;
    }
    return out;
  }

  /** Part of a line: appended to the piece, full pieces sent, anything past the line's cap counted. */
  private add(part: string, out: string[]): void {
    const { pieceChars, maxLineChars } = this.limits;
    let i = 0;
    while (i < part.length) {
      const room = maxLineChars - this.lineSoFar - this.piece.length;
      if (room <= 0) {
        this.dropped += part.length - i;
        return;
      }
      const take = Math.min(part.length - i, pieceChars - this.piece.length, room);
      this.piece += part.slice(i, i + take);
      i += take;
      if (this.piece.length === pieceChars) {
        out.push(this.piece);
        this.lineSoFar += this.piece.length;
        this.piece = '';
      }
    }
  }

  private endLine(out: string[]): void {
    // An empty line is a message of its own; a line that ended exactly on a piece's end is done.
    if (this.piece || this.lineSoFar === 0) out.push(this.piece);
    if (this.dropped) out.push(cutNote(this.dropped, this.limits));
    this.piece = '';
    this.lineSoFar = 0;
    this.dropped = 0;
  }
}
