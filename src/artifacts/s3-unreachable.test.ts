/**
 * A store that cannot be reached: every request ends (connect and idle timeouts), is retried a
 * bounded number of times with each failed attempt told to the pod side's reporter, and fails
 * naming the reason and the attempts — instead of holding a step Running with no message.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { STORE_ATTEMPTS, STORE_TIMEOUTS, storeClient, storeMessage, uploadFile } from './s3.js';
import { reportStoreRetries } from './store-error.js';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const listen = async (server: Server): Promise<number> => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return (server.address() as { port: number }).port;
};

afterEach(() => reportStoreRetries(undefined));

describe('an unreachable object store', () => {
  it('has connect and idle timeouts on every request', () => {
    expect(STORE_TIMEOUTS.connectMs).toBeGreaterThan(0);
    expect(STORE_TIMEOUTS.idleMs).toBeGreaterThan(0);
  });

  it('a store that accepts and never answers fails after the bounded attempts, each retry told', async () => {
    const sockets: Socket[] = [];
    const silent = createServer((s) => sockets.push(s));
    const port = await listen(silent);
    const lines: string[] = [];
    reportStoreRetries((l) => lines.push(l));
    const loc = { bucket: 'b', key: 'k', endpoint: `127.0.0.1:${port}`, insecure: true };
    const client = storeClient(loc, { accessKey: 'a', secretKey: 's' }, { connectMs: 1000, idleMs: 200 });
    const t0 = Date.now();
    try {
      const err = await client.send(new GetObjectCommand({ Bucket: 'b', Key: 'k' })).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(Date.now() - t0).toBeLessThan(15_000);
      expect(storeMessage(err)).toMatch(
        /^no answer \(.*timed out.*; the store accepts no connection or does not reply\) \(gave up after 5 attempts\)$/,
      );
      expect(lines).toHaveLength(STORE_ATTEMPTS - 1);
      expect(lines[0]).toMatch(
        new RegExp(`^GetObjectCommand s3://b/k at 127\\.0\\.0\\.1:${port}: attempt 1 of 5 failed \\(no answer .*\\); retrying$`),
      );
    } finally {
      client.destroy();
      for (const s of sockets) s.destroy();
      silent.close();
    }
  }, 30_000);

  it('a store that refuses connections: the upload fails at once naming the location, the reason and the attempts', async () => {
    const closed = createServer();
    const port = await listen(closed);
    closed.close();
    const lines: string[] = [];
    reportStoreRetries((l) => lines.push(l));
    const file = join(mkdtempSync(join(tmpdir(), 'plugflow-s3-')), 'f');
    writeFileSync(file, 'x');
    const loc = { bucket: 'b', key: 'k', endpoint: `127.0.0.1:${port}`, insecure: true };
    await expect(uploadFile(loc, { accessKey: 'a', secretKey: 's' }, file)).rejects.toThrow(
      `uploading to s3://b/k at 127.0.0.1:${port}: connect ECONNREFUSED 127.0.0.1:${port} (gave up after 5 attempts)`,
    );
    expect(lines.length).toBe(STORE_ATTEMPTS - 1);
    expect(lines[2]).toContain('attempt 3 of 5 failed (connect ECONNREFUSED');
  });
});
