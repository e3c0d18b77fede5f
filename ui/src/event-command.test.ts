import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { eventSendCommand, shellQuote } from './event-command.js';

/** What a POSIX shell makes of the command: its words, as the program receives them. */
const words = (command: string): string[] =>
  JSON.parse(
    execFileSync('sh', [
      '-c',
      `node -e 'console.log(JSON.stringify(process.argv.slice(1)))' -- ${command.replace(/^plugflow /, '')}`,
    ]).toString(),
  ) as string[];

describe('the event tester\'s "send it for real" command', () => {
  it('keeps the headers and a payload with quotes, spaces and dollars exactly as tested', () => {
    const payload = '{"msg": "it\'s  $HOME `x`", "n": 1}';
    const cmd = eventSendCommand('team-a', '', payload, "X-Event-Id: abc 1\nX-Who: o'brien\n\n");
    expect(words(cmd)).toEqual([
      'event',
      'send',
      'team-a',
      '',
      '--data',
      JSON.stringify(JSON.parse(payload)),
      '-H',
      'X-Event-Id: abc 1',
      '-H',
      "X-Who: o'brien",
    ]);
  });

  it('sends text that is not JSON as typed, so the server names what is wrong with it', () => {
    expect(words(eventSendCommand('ns', 'push', 'not json\n  here', ''))).toEqual([
      'event',
      'send',
      'ns',
      'push',
      '--data',
      'not json\n  here',
    ]);
  });

  it('quotes only what needs it', () => {
    expect(shellQuote('team-a')).toBe('team-a');
    expect(shellQuote('')).toBe("''");
    expect(shellQuote("a'b")).toBe(`'a'\\''b'`);
  });
});
