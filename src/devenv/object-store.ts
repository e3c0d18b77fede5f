/**
 * A real S3-compatible object store (MinIO, built from the Go module proxy by
 * hack/build-minio.sh into the cache) for the artifact tests and `plugflow dev`. It listens on
 * loopback with fresh random credentials and keeps its data in a directory of its own.
 */
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './control-plane.js';
import { dieWithParent, killOnExit } from '../runner/parent-death.js';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

export interface ObjectStore {
  /** host:port (plain http). */
  endpoint: string;
  /** http://host:port */
  url: string;
  accessKey: string;
  secretKey: string;
  stop(): Promise<void>;
}

/** Builds MinIO if needed and returns the binary's path. */
export async function ensureMinioBinary(log: (line: string) => void = () => {}): Promise<string> {
  const script = join(REPO_ROOT, 'hack', 'build-minio.sh');
  return new Promise((resolvePath, reject) => {
    const child = execFile('bash', [script, '--print'], { maxBuffer: 1 << 20 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`building MinIO with ${script} failed: ${stderr.trim().slice(-2000) || err.message}`));
      else resolvePath(stdout.trim().split('\n').pop() as string);
    });
    child.stderr?.on('data', (d: Buffer) => {
      for (const line of d.toString().split('\n')) if (line.trim()) log(line);
    });
  });
}

export interface ObjectStoreOptions {
  /** Data directory (default: a fresh temporary one, removed on stop). */
  dir?: string;
  log?: (line: string) => void;
  /** Address to listen on (default 127.0.0.1). A real node's pods need the host's address. */
  host?: string;
}

export async function startObjectStore(opts: ObjectStoreOptions = {}): Promise<ObjectStore> {
  const log = opts.log ?? (() => {});
  const t0 = Date.now();
  const bin = await ensureMinioBinary(log);
  const owns = !opts.dir;
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), 'plugflow-minio-'));
  mkdirSync(join(dir, 'data'), { recursive: true });
  const host = opts.host ?? '127.0.0.1';
  const [port, consolePort] = [await freePort(), await freePort()];
  const accessKey = `plugflow${randomBytes(4).toString('hex')}`;
  const secretKey = randomBytes(20).toString('hex');
  // Dies with this process even when it is SIGKILLed (as the control plane's processes do).
  const cmd = dieWithParent(bin, [
    'server',
    join(dir, 'data'),
    '--address',
    `${host}:${port}`,
    '--console-address',
    `127.0.0.1:${consolePort}`,
    '--quiet',
  ]);
  const child: ChildProcess = spawn(cmd.file, cmd.args, {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: dir,
      MINIO_ROOT_USER: accessKey,
      MINIO_ROOT_PASSWORD: secretKey,
      MINIO_BROWSER: 'off',
      MINIO_UPDATE: 'off',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (d: Buffer) => {
    output = (output + d.toString()).slice(-4000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  let exited: number | null | undefined;
  const forget = killOnExit(child.pid);
  child.on('exit', (code) => {
    exited = code;
    forget();
  });
  const url = `http://${host}:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (exited !== undefined) throw new Error(`MinIO exited (code ${exited}) before it was ready:\n${output}`);
    try {
      const res = await fetch(`${url}/minio/health/ready`);
      if (res.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`MinIO did not become ready at ${url} within 60 s:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  log(`[object-store] MinIO ready at ${url} in ${Date.now() - t0} ms (data in ${dir})`);
  return {
    endpoint: `${host}:${port}`,
    url,
    accessKey,
    secretKey,
    stop: async () => {
      if (exited === undefined) {
        const gone = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
        await gone;
        clearTimeout(timer);
      }
      if (owns) rmSync(dir, { recursive: true, force: true });
    },
  };
}
