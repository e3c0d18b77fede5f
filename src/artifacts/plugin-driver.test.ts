import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PluginDriver, type PluginLocation } from './plugin-driver.js';

const DRIVER = resolve(import.meta.dirname, '../../test/support/artifact-driver.js');
const children: ChildProcess[] = [];
let root: string;
let store: string;

/** Starts the test driver on <root>/<name>/socket, as a pod's driver container would. */
function startDriver(name: string, ...flags: string[]): void {
  mkdirSync(join(root, name), { recursive: true });
  const child = spawn(process.execPath, [DRIVER, ...flags, join(root, name, 'socket')], { stdio: ['ignore', 'ignore', 'inherit'] });
  children.push(child);
}

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'pf-ap-'));
  store = mkdtempSync(join(tmpdir(), 'pf-ap-store-'));
  startDriver('dirstore');
  startDriver('oldstore', '--no-save-stream');
});

afterAll(async () => {
  await Promise.all(
    children.map(
      (c) =>
        new Promise<void>((done) => {
          c.once('exit', () => done());
          c.kill('SIGTERM');
        }),
    ),
  );
});

const loc = (name: string, key: string): PluginLocation => ({ kind: 'plugin', name, configuration: `dir: ${store}\n`, key });
const calls = () => readFileSync(join(store, 'calls.log'), 'utf8').trim().split('\n');

describe('an artifact driver plugin over gRPC (the test driver, a real process on a unix socket)', () => {
  it('streams a file to a driver that supports SaveStream and loads it back', async () => {
    const driver = await PluginDriver.connect('dirstore', 10, root);
    try {
      const packed = join(mkdtempSync(join(tmpdir(), 'pf-ap-in-')), 'out.tgz');
      const body = Buffer.alloc(3 * 1024 * 1024 + 17, 7); // more than one chunk
      writeFileSync(packed, body);
      expect(await driver.save(loc('dirstore', 'runs/1/out.tgz'), { name: 'out', path: '/tmp/out' }, packed)).toBe('stream');
      expect(readFileSync(join(store, 'data/runs/1/out.tgz')).equals(body)).toBe(true);
      const dest = join(mkdtempSync(join(tmpdir(), 'pf-ap-dest-')), 'fetched');
      await driver.load(loc('dirstore', 'runs/1/out.tgz'), { name: 'out', path: '/in/out' }, dest);
      expect(readFileSync(dest).equals(body)).toBe(true);
      // The exchanged file does not stay in the socket directory.
      expect(readdirSync(join(root, 'dirstore'))).toEqual(['socket']);
    } finally {
      driver.close();
    }
  });

  it('saves a directory (and everything, for a driver without SaveStream) through the socket directory', async () => {
    const driver = await PluginDriver.connect('oldstore', 10, root);
    try {
      const dir = mkdtempSync(join(tmpdir(), 'pf-ap-tree-'));
      mkdirSync(join(dir, 'sub'));
      writeFileSync(join(dir, 'sub', 'b.txt'), 'B');
      expect(await driver.save(loc('oldstore', 'tree'), { name: 'tree' }, dir)).toBe('file');
      const file = join(dir, 'sub', 'b.txt');
      expect(await driver.save(loc('oldstore', 'one.txt'), { name: 'one' }, file)).toBe('file');
      const dest = join(mkdtempSync(join(tmpdir(), 'pf-ap-dest-')), 'tree');
      await driver.load(loc('oldstore', 'tree'), { name: 'tree' }, dest);
      expect(readFileSync(join(dest, 'sub', 'b.txt'), 'utf8')).toBe('B');
      expect(calls()).toEqual(expect.arrayContaining(['Save tree', 'Save one.txt', 'Load tree']));
      expect(readdirSync(join(root, 'oldstore'))).toEqual(['socket']);
    } finally {
      driver.close();
    }
  });

  it("fails with the driver's reason, naming the driver and the call", async () => {
    const driver = await PluginDriver.connect('dirstore', 10, root);
    try {
      await expect(driver.load(loc('dirstore', 'nothing/here'), { name: 'x' }, join(root, 'nope'))).rejects.toThrow(
        'artifact driver "dirstore": Load failed: no artifact at key nothing/here',
      );
      await driver.delete(loc('dirstore', 'runs/1/out.tgz'), 'out');
      await expect(driver.load(loc('dirstore', 'runs/1/out.tgz'), { name: 'x' }, join(root, 'nope'))).rejects.toThrow(/no artifact at key/);
    } finally {
      driver.close();
    }
  });

  it('gives up on a socket nobody answers on within the connection timeout', async () => {
    mkdirSync(join(root, 'silent'));
    const sock = createServer(() => {}); // accepts, never speaks HTTP/2
    await new Promise<void>((done) => sock.listen(join(root, 'silent', 'socket'), done));
    try {
      await expect(PluginDriver.connect('silent', 1, root)).rejects.toThrow(
        /^artifact driver "silent": no connection on .*silent\/socket within 1s/,
      );
    } finally {
      sock.close();
    }
  });
});
