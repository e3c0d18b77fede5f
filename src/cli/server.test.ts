import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { registerServerCommands } from './server.js';

/** Parses `plugflow server ARGS`; resolves with the refusal's message (none of these reach the cluster). */
async function refusal(...args: string[]): Promise<string> {
  const program = new Command().exitOverride();
  registerServerCommands(program);
  program.commands.forEach((c) => c.exitOverride());
  return program.parseAsync(['node', 'plugflow', 'server', ...args]).then(
    () => 'accepted',
    (err: Error) => err.message,
  );
}

describe('plugflow server: event bus flags', () => {
  it('refuses flags that a bus makes meaningless, naming why', async () => {
    expect(await refusal('--event-bus', 'nats://127.0.0.1:4222', '--event-dispatch', 'sync')).toMatch(
      /--event-dispatch is for a server without --event-bus/,
    );
    expect(await refusal('--event-bus', 'nats://127.0.0.1:4222', '--event-operation-queue-size', '10')).toMatch(
      /--event-operation-queue-size is for a server without --event-bus/,
    );
  });

  it('refuses bus options without a bus', async () => {
    expect(await refusal('--event-bus-key-file', '/tmp/key')).toBe('--event-bus-key-file needs --event-bus');
    expect(await refusal('--event-bus-replicas', '1')).toBe('--event-bus-replicas needs --event-bus');
    expect(await refusal('--event-bus-ack-wait', '5')).toBe('--event-bus-ack-wait needs --event-bus');
  });
});
