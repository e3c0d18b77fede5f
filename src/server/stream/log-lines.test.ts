import { describe, expect, it } from 'vitest';
import { cutNote, LogLines, type LineLimits } from './log-lines.js';

const small: LineLimits = { pieceChars: 4, maxLineChars: 10 };

function all(lines: LogLines, ...chunks: string[]): string[] {
  return [...chunks.flatMap((c) => lines.push(Buffer.from(c))), ...lines.end()];
}

describe('LogLines', () => {
  it('sends one message per line, empty lines included, and the last line without a newline', () => {
    expect(all(new LogLines(small), 'a\n\nbc\nd')).toEqual(['a', '', 'bc', 'd']);
  });

  it('joins a line cut between chunks, and a character cut between chunks', () => {
    const euro = Buffer.from('€'); // three bytes
    const lines = new LogLines(small);
    const out = [
      ...lines.push(Buffer.from('x')),
      ...lines.push(euro.subarray(0, 1)),
      ...lines.push(Buffer.concat([euro.subarray(1), Buffer.from('y\n')])),
      ...lines.end(),
    ];
    expect(out).toEqual(['x€y']);
  });

  it('sends a long line in pieces as they fill, before its newline comes', () => {
    const lines = new LogLines(small);
    expect(lines.push(Buffer.from('abcdefg'))).toEqual(['abcd']);
    expect(lines.push(Buffer.from('h\n'))).toEqual(['efgh']);
    expect(lines.end()).toEqual([]);
  });

  it('cuts a line over the cap and says how much was dropped', () => {
    expect(all(new LogLines(small), '0123456789', 'ABCDE', '\nnext\n')).toEqual(['0123', '4567', '89', cutNote(5, small), 'next']);
    expect(cutNote(5, small)).toContain('longer than 10 characters; the last 5 were not sent');
  });

  it('holds at most one piece for a log that never has a newline', () => {
    const limits: LineLimits = { pieceChars: 1024, maxLineChars: 4096 };
    const lines = new LogLines(limits);
    const megabyte = Buffer.alloc(1 << 20, 'z');
    let sent = 0;
    for (let i = 0; i < 64; i++) sent += lines.push(megabyte).length;
    expect(sent).toBe(4); // the first 4,096 characters, in four pieces; the rest only counted
    const tail = lines.end();
    expect(tail).toEqual([cutNote(64 * (1 << 20) - 4096, limits)]);
    // What it keeps between chunks is a piece and counters, not the line.
    expect(JSON.stringify(lines).length).toBeLessThan(2048);
  });

  it('refuses limits that cannot work', () => {
    expect(() => new LogLines({ pieceChars: 0, maxLineChars: 10 })).toThrow(/pieceChars/);
    expect(() => new LogLines({ pieceChars: 8, maxLineChars: 4 })).toThrow(/maxLineChars/);
  });
});
