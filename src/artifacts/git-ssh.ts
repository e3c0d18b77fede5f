/**
 * Git over SSH for the git driver (git.ts). isomorphic-git speaks git's smart-HTTP protocol to a
 * pluggable client; this client carries each of its two requests over an SSH connection (ssh2,
 * pure JavaScript: the init container needs no ssh or git binary):
 *   GET  …/info/refs?service=git-upload-pack  → exec `git-upload-pack 'PATH'`, read the ref
 *        advertisement up to its flush packet, hand it back with the HTTP service header;
 *   POST …/git-upload-pack                    → exec again, skip the advertisement, write the
 *        request (wants, deepen, done), hand back what the server answers (NAK + pack).
 * With `done` in the request the negotiation ends in one round, so the stateful SSH protocol
 * answers exactly what the stateless HTTP one would.
 *
 * The server's host key is checked against known_hosts lines (PLUGFLOW_GIT_KNOWN_HOSTS on the
 * controller) unless the artifact says `insecureIgnoreHostKey: true`.
 */
import { Client, type ClientChannel, type ConnectConfig } from 'ssh2';
import type { GitHttpRequest, GitHttpResponse, HttpClient } from 'isomorphic-git';

export interface SshTarget {
  host: string;
  port: number;
  username: string;
  path: string;
}

export class GitSshError extends Error {}

/** `ssh://[user@]host[:port]/path` or the scp-like `[user@]host:path`; undefined for other URLs. */
export function parseSshUrl(url: string): SshTarget | undefined {
  if (url.startsWith('ssh://')) {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      return undefined;
    }
    if (!u.hostname || !u.pathname || u.pathname === '/') return undefined;
    return {
      host: u.hostname.replace(/^\[|\]$/g, ''),
      port: u.port ? Number(u.port) : 22,
      username: decodeURIComponent(u.username) || 'git',
      path: decodeURIComponent(u.pathname),
    };
  }
  // scp-like: no scheme, a host without slashes, a colon, then the path.
  const scp = /^(?:([^@/:]+)@)?([^/:@]+):(?!\/\/)(.+)$/.exec(url);
  if (!scp) return undefined;
  return { host: scp[2]!, port: 22, username: scp[1] ?? 'git', path: scp[3]! };
}

/**
 * Whether `key` (the raw public key blob) is listed for the host in known_hosts `text` and not
 * marked `@revoked`. Hashed host names (`|1|…`) and `@cert-authority` lines are not matched.
 */
export function knownHostKey(text: string, host: string, port: number, key: Buffer): boolean {
  const names = port === 22 ? [host] : [`[${host}]:${port}`];
  let listed = false;
  for (const raw of text.split('\n')) {
    const fields = raw.trim().split(/\s+/);
    if (!fields[0] || fields[0].startsWith('#')) continue;
    const marker = fields[0].startsWith('@') ? fields.shift() : undefined;
    const [hosts, , blob] = fields;
    if (!hosts || !blob || !hosts.split(',').some((h) => names.includes(h))) continue;
    if (!Buffer.from(blob, 'base64').equals(key)) continue;
    if (marker === '@revoked') return false;
    if (marker === undefined) listed = true;
  }
  return listed;
}

export interface SshOptions {
  privateKey?: string;
  insecureIgnoreHostKey?: boolean;
  knownHosts?: string;
}

/** The HTTP client isomorphic-git is given for an SSH repository (see the module comment). */
export function sshHttpClient(target: SshTarget, opts: SshOptions): HttpClient {
  const where = `${target.username}@${target.host}:${target.port}`;
  let hostKeyProblem: string | undefined;
  const connect = (): Promise<Client> =>
    new Promise((resolve, reject) => {
      const conn = new Client();
      const config: ConnectConfig = {
        host: target.host,
        port: target.port,
        username: target.username,
        readyTimeout: 20_000,
        hostVerifier: (key: Buffer) => {
          if (opts.insecureIgnoreHostKey) return true;
          if (opts.knownHosts && knownHostKey(opts.knownHosts, target.host, target.port, key)) return true;
          hostKeyProblem = `the host key of ${target.host}:${target.port} is not in the controller's PLUGFLOW_GIT_KNOWN_HOSTS (add it, or set insecureIgnoreHostKey: true)`;
          return false;
        },
      };
      if (opts.privateKey) config.privateKey = opts.privateKey;
      conn.once('ready', () => resolve(conn));
      conn.once('error', (err: Error & { level?: string }) => {
        if (hostKeyProblem) reject(new GitSshError(hostKeyProblem));
        else if (err.level === 'client-authentication')
          reject(new GitSshError(`${where} refused the key (check sshPrivateKeySecret and the server's authorized keys)`));
        else reject(new GitSshError(`connecting to ${where}: ${err.message}`));
      });
      conn.connect(config);
    });
  const exec = async (): Promise<{ conn: Client; ch: ClientChannel }> => {
    const conn = await connect();
    const quoted = `'${target.path.replace(/'/g, `'\\''`)}'`;
    const ch = await new Promise<ClientChannel>((resolve, reject) =>
      conn.exec(`git-upload-pack ${quoted}`, (err, ch) => (err ? reject(err) : resolve(ch))),
    );
    return { conn, ch };
  };
  return {
    async request(req: GitHttpRequest): Promise<GitHttpResponse> {
      const { conn, ch } = await exec();
      const reader = new PktReader(ch);
      try {
        const advertisement = await reader.untilFlush(where);
        if ((req.method ?? 'GET').toUpperCase() === 'GET') {
          ch.end();
          conn.end();
          const header = Buffer.from('001e# service=git-upload-pack\n0000');
          return response(req, 'application/x-git-upload-pack-advertisement', one(Buffer.concat([header, advertisement])));
        }
        for await (const chunk of asIterable(req.body)) ch.write(chunk);
        ch.end();
        return response(
          req,
          'application/x-git-upload-pack-result',
          reader.rest(() => conn.end()),
        );
      } catch (err) {
        conn.end();
        throw err;
      }
    },
  };
}

function response(req: GitHttpRequest, type: string, body: AsyncIterableIterator<Uint8Array>): GitHttpResponse {
  return { url: req.url, method: req.method ?? 'GET', statusCode: 200, statusMessage: 'OK', headers: { 'content-type': type }, body };
}

async function* one(b: Buffer): AsyncIterableIterator<Uint8Array> {
  yield b;
}

async function* asIterable(body: GitHttpRequest['body']): AsyncIterableIterator<Uint8Array> {
  if (!body) return;
  if (Array.isArray(body)) for (const b of body) yield b;
  else for await (const b of body as AsyncIterable<Uint8Array>) yield b;
}

/** Reads pkt-lines off a channel: the advertisement up to its flush, then the rest as it comes. */
class PktReader {
  private buf = Buffer.alloc(0);
  private readonly it: AsyncIterator<Buffer>;
  private stderr = '';

  constructor(ch: ClientChannel) {
    this.it = (ch as unknown as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
    ch.stderr.on('data', (d: Buffer) => {
      this.stderr = (this.stderr + d.toString()).slice(-2000);
    });
  }

  private async more(where: string): Promise<void> {
    const next = await this.it.next();
    if (next.done) throw new GitSshError(`${where} closed the connection: ${this.stderr.trim() || 'no reason given'}`);
    this.buf = Buffer.concat([this.buf, next.value]);
  }

  async untilFlush(where: string): Promise<Buffer> {
    let at = 0;
    for (;;) {
      while (this.buf.length < at + 4) await this.more(where);
      const len = parseInt(this.buf.subarray(at, at + 4).toString('latin1'), 16);
      if (Number.isNaN(len))
        throw new GitSshError(`${where} did not answer as a git server: ${this.stderr.trim() || this.buf.subarray(0, 80).toString()}`);
      if (len === 0) {
        const out = this.buf.subarray(0, at + 4);
        this.buf = this.buf.subarray(at + 4);
        return out;
      }
      while (this.buf.length < at + len) await this.more(where);
      at += len;
    }
  }

  async *rest(done: () => void): AsyncIterableIterator<Uint8Array> {
    try {
      if (this.buf.length) yield this.buf;
      for (;;) {
        const next = await this.it.next();
        if (next.done) return;
        yield next.value;
      }
    } finally {
      done();
    }
  }
}
