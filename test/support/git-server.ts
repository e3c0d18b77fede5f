/**
 * A real git server for the artifact tests: `git http-backend` (git's own smart-HTTP server, a
 * CGI program) behind a small Node HTTP server that runs it per request, with basic auth. The
 * repositories are made by the test with the git command line.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface GitServer {
  url: string;
  root: string;
  close(): void;
}

const GIT_ENV = { GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.com', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.com' };

/** Runs git in `cwd`; returns its trimmed stdout. */
/** Runs git in `cwd`; its stderr is kept in the thrown error (tests expect some calls to fail), not printed. */
export function gitCmd(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, {
    cwd,
    env: { ...process.env, ...GIT_ENV },
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  }).trim();
}

/** A bare repository `<name>.git` under the server's root, filled from a working tree made by `fill`. */
export function makeRepo(root: string, name: string, fill: (work: string) => void): string {
  const work = mkdtempSync(join(tmpdir(), `plugflow-git-${name}-`));
  gitCmd(work, 'init', '-q', '-b', 'main');
  fill(work);
  const bare = join(root, `${name}.git`);
  execFileSync('git', ['clone', '-q', '--bare', '--mirror', work, bare]);
  gitCmd(bare, 'update-server-info');
  return bare;
}

export function commitFile(work: string, file: string, text: string, message: string): string {
  mkdirSync(join(work, file, '..'), { recursive: true });
  writeFileSync(join(work, file), text);
  gitCmd(work, 'add', '-A');
  gitCmd(work, 'commit', '-q', '-m', message);
  return gitCmd(work, 'rev-parse', 'HEAD');
}

export async function startGitServer(auth?: { username: string; password: string }): Promise<GitServer> {
  const root = mkdtempSync(join(tmpdir(), 'plugflow-git-server-'));
  const expected = auth ? `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString('base64')}` : undefined;
  const server: Server = createServer((req, res) => {
    if (expected && req.headers.authorization !== expected) {
      res.writeHead(401, { 'www-authenticate': 'Basic realm="git"' }).end();
      return;
    }
    const url = new URL(req.url ?? '/', 'http://x');
    const cgi = spawn('git', ['http-backend'], {
      env: {
        PATH: process.env.PATH ?? '',
        GIT_PROJECT_ROOT: root,
        GIT_HTTP_EXPORT_ALL: '1',
        PATH_INFO: decodeURIComponent(url.pathname),
        QUERY_STRING: url.search.slice(1),
        REQUEST_METHOD: req.method ?? 'GET',
        CONTENT_TYPE: req.headers['content-type'] ?? '',
        REMOTE_USER: auth?.username ?? '',
        REMOTE_ADDR: '127.0.0.1',
        HTTP_GIT_PROTOCOL: String(req.headers['git-protocol'] ?? ''),
      },
    });
    req.pipe(cgi.stdin);
    let head = Buffer.alloc(0);
    let headersDone = false;
    cgi.stdout.on('data', (chunk: Buffer) => {
      if (headersDone) {
        res.write(chunk);
        return;
      }
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      headersDone = true;
      let status = 200;
      for (const line of head.subarray(0, end).toString().split('\r\n')) {
        const i = line.indexOf(':');
        const k = line.slice(0, i).trim();
        const v = line.slice(i + 1).trim();
        if (k.toLowerCase() === 'status') status = Number(v.split(' ')[0]);
        else res.setHeader(k, v);
      }
      res.writeHead(status);
      res.write(head.subarray(end + 4));
    });
    cgi.on('close', () => res.end());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  return { url: `http://127.0.0.1:${port}`, root, close: () => server.close() };
}
