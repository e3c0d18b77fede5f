import { Command } from 'commander';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
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

describe('plugflow server: reaching the event bus', () => {
  const dir = mkdtempSync(join(tmpdir(), 'plugflow-server-cli-'));
  const key = join(dir, 'key');
  const password = join(dir, 'password');
  writeFileSync(key, 'k'.repeat(40));
  writeFileSync(password, 's3cret\n');
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('needs the key every stored event is sealed with', async () => {
    expect(await refusal('--event-bus', 'nats://127.0.0.1:4222')).toMatch(/--event-bus needs --event-bus-key-file/);
  });

  it('refuses a bus without credentials unless told the operator accepts it', async () => {
    expect(await refusal('--event-bus', 'nats://127.0.0.1:4222', '--event-bus-key-file', key)).toMatch(
      /the event bus needs credentials: give --event-bus-password-file .* pass --unsafe-event-bus-without-auth/,
    );
  });

  it('refuses credentials in the URL and does not repeat them', async () => {
    const message = await refusal(
      '--event-bus',
      'nats://alice:hunter2@nats:4222',
      '--event-bus-key-file',
      key,
      '--event-bus-password-file',
      password,
    );
    expect(message).toMatch(/carries credentials.*--event-bus-password-file/);
    expect(message).not.toContain('hunter2');
    expect(message).toContain('nats://***@nats:4222');
  });

  it('takes the unsafe flag and the credential flags only with a bus', async () => {
    expect(await refusal('--unsafe-event-bus-without-auth')).toBe('--unsafe-event-bus-without-auth needs --event-bus');
    expect(await refusal('--event-bus-password-file', password)).toBe('--event-bus-password-file needs --event-bus');
    expect(await refusal('--event-bus-ca-file', password)).toBe('--event-bus-ca-file needs --event-bus');
  });
});
