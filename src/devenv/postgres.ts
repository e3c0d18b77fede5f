/**
 * A PostgreSQL server of its own for `plugflow dev` and the tests: Debian's `postgresql` package
 * (hack/system-packages.sh installs it), a fresh cluster made with initdb, listening on loopback
 * on a free port with a random password, its socket and data in a directory of its own. Start-up
 * is timed, and a failure names the step (finding the binaries, initdb, the server) with the end
 * of its output.
 *
 * PostgreSQL refuses to run as root: as root it runs as the `postgres` user the package creates,
 * with its directory under the system's temporary directory (a 0700 home is not reachable by
 * that user).
 */
import { execFile, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { errorMessage } from '../log/error-message.js';
import { freePort } from './control-plane.js';
import { startServerProcess } from './server-process.js';

export interface Postgres {
  /** `postgres://plugflow:…@127.0.0.1:PORT/plugflow` */
  url: string;
  stop(): Promise<void>;
  /** SIGKILL, as an outage would end it (tests); `restart()` brings it back on the same data. */
  kill(): Promise<void>;
  restart(): Promise<void>;
}

export interface PostgresOptions {
  log?: (line: string) => void;
}

/** The directory of Debian's PostgreSQL binaries (the newest installed major), else those on PATH. */
export function postgresBinDir(): string {
  const root = '/usr/lib/postgresql';
  if (existsSync(root)) {
    const majors = readdirSync(root)
      .filter((v) => /^\d+$/.test(v) && existsSync(join(root, v, 'bin', 'postgres')))
      .sort((a, b) => Number(b) - Number(a));
    if (majors[0]) return join(root, majors[0], 'bin');
  }
  throw new Error(
    'PostgreSQL is not installed (no /usr/lib/postgresql/<major>/bin/postgres): run `make deps` as root, or `sudo apt-get install -y postgresql`',
  );
}

export async function startPostgres(opts: PostgresOptions = {}): Promise<Postgres> {
  const log = opts.log ?? (() => {});
  const t0 = Date.now();
  const bin = postgresBinDir();
  const asRoot = userInfo().uid === 0;
  const runAs = asRoot ? 'postgres' : undefined;
  const dir = mkdtempSync(join(tmpdir(), 'plugflow-postgres-'));
  const data = join(dir, 'data');
  const password = randomBytes(18).toString('base64url');
  const pwfile = join(dir, 'pwfile');
  writeFileSync(pwfile, password, { mode: 0o600 });
  mkdirSync(data, { mode: 0o700 });
  if (asRoot) for (const p of [dir, data, pwfile]) chownSync(p, ...postgresIds());
  const run = (file: string, args: string[]) =>
    promisify(execFile)(
      runAs ? 'setpriv' : file,
      runAs ? [`--reuid=${runAs}`, `--regid=${runAs}`, '--init-groups', '--', file, ...args] : args,
      { env: { PATH: process.env.PATH ?? '', LC_ALL: 'C.UTF-8' } },
    );
  try {
    await run(join(bin, 'initdb'), ['-D', data, '-U', 'plugflow', `--pwfile=${pwfile}`, '--auth=scram-sha-256', '-E', 'UTF8', '--no-sync']);
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    const e = err as { stderr?: string; message: string };
    throw new Error(`PostgreSQL step 'initdb' failed: ${(e.stderr ?? e.message).trim().slice(-2000)}`);
  }
  rmSync(pwfile, { force: true });
  const port = await freePort();
  const url = `postgres://plugflow:${password}@127.0.0.1:${port}/postgres`;
  const start = () =>
    startServerProcess({
      name: `PostgreSQL on 127.0.0.1:${port}`,
      file: join(bin, 'postgres'),
      args: ['-D', data, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', `unix_socket_directories=${dir}`, '-c', 'fsync=off'],
      env: { PATH: process.env.PATH ?? '', LC_ALL: 'C.UTF-8' },
      runAs,
      ready: async () => {
        const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 });
        try {
          await c.connect();
          await c.query('select 1');
          return true;
        } finally {
          await c.end().catch(() => {});
        }
      },
      timeoutMs: 60_000,
    });
  let server = await start().catch((err: unknown) => {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`PostgreSQL step 'start the server' failed: ${(err as Error).message}`);
  });
  // The database plugflow uses, made once.
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query('create database plugflow');
  await admin.end();
  log(`[postgres] PostgreSQL ${bin.split('/').at(-2)} ready at 127.0.0.1:${port} in ${Date.now() - t0} ms (data in ${data})`);
  return {
    url: url.replace(/\/postgres$/, '/plugflow'),
    stop: async () => {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
    kill: () => server.kill(),
    restart: async () => {
      await server.stop();
      // After a SIGKILL the old server's backends notice its death and exit a moment later; until
      // then they hold its shared memory, and a new server refuses to start on the directory.
      for (let waited = 0; ; waited += 250) {
        try {
          server = await start();
          return;
        } catch (err) {
          if (waited >= 30_000 || !/pre-existing shared memory block|lock file .* already exists/.test(errorMessage(err))) throw err;
          await new Promise((r) => setTimeout(r, 250));
        }
      }
    },
  };
}

/** The uid and gid of the `postgres` user (the package creates it). */
function postgresIds(): [number, number] {
  const id = (flag: string) => Number(String(execFileSync('id', [flag, 'postgres'])).trim());
  return [id('-u'), id('-g')];
}
