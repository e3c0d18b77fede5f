/**
 * An OCI image registry (the CNCF distribution registry, built from the Go module proxy by
 * hack/build-store-server.sh into the cache) for the image entrypoint tests. It listens on
 * loopback over plain HTTP, keeps its blobs in a directory of its own, and either serves everyone,
 * or with `htpasswd` asks every client for that user and password (Basic), or with `token` works
 * as Docker Hub, GHCR and Quay do: a 401 names a token service (run here on its own socket), which
 * hands out signed tokens — to anyone for the public repositories, with the password for the others.
 */
import { createPrivateKey, randomBytes, randomUUID, sign } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { generate } from 'selfsigned';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import bcrypt from 'bcryptjs';
import { stringify } from 'yaml';
import { freePort } from '../../src/devenv/control-plane.js';
import { startServerProcess, toolPath } from '../../src/devenv/server-process.js';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

export interface ImageRegistry {
  /** host:port, the first part of image names pushed to it. */
  host: string;
  /** host:port of its token service (token auth only). */
  tokenHost?: string;
  stop(): Promise<void>;
}

export interface RegistryAuthOptions {
  htpasswd?: { user: string; password: string };
  token?: { user: string; password: string; publicRepositories: string[] };
  log?: (line: string) => void;
}

export async function startImageRegistry(opts: RegistryAuthOptions = {}): Promise<ImageRegistry> {
  const log = opts.log ?? (() => {});
  const t0 = Date.now();
  const bin = await toolPath([join(REPO_ROOT, 'hack', 'build-store-server.sh'), 'registry'], 'building the distribution registry', log);
  const dir = mkdtempSync(join(tmpdir(), 'plugflow-registry-'));
  // The token service binds first: a port picked for the registry before it could be handed to
  // the token service by the kernel, and then the registry's readiness probe would be answered by
  // the token service (CI saw exactly that: pushes answered with tokens).
  let tokenServer: Server | undefined;
  let tokenHost: string | undefined;
  let auth: Record<string, unknown> | undefined;
  if (opts.token) {
    const t = await startTokenServer(dir, opts.token);
    tokenServer = t.server;
    tokenHost = new URL(t.realm).host;
    auth = { token: { realm: t.realm, service: 'plugflow-test-registry', issuer: 'plugflow-test-tokens', rootcertbundle: t.certFile } };
  }
  if (opts.htpasswd) {
    const file = join(dir, 'htpasswd');
    writeFileSync(file, `${opts.htpasswd.user}:${bcrypt.hashSync(opts.htpasswd.password, 6)}\n`);
    auth = { htpasswd: { realm: 'plugflow-test', path: file } };
  }
  // A port picked free can still be taken before the registry binds it (the tests start several
  // servers at once): the registry then exits on "address already in use" and is started again.
  let host = '';
  let server: Awaited<ReturnType<typeof startServerProcess>> | undefined;
  for (let attempt = 1; !server; attempt++) {
    host = `127.0.0.1:${await freePort()}`;
    const config: Record<string, unknown> = {
      version: 0.1,
      log: { level: 'warn', accesslog: { disabled: true } },
      storage: { filesystem: { rootdirectory: join(dir, 'data') } },
      http: { addr: host, secret: randomBytes(16).toString('hex') },
      ...(auth ? { auth } : {}),
    };
    writeFileSync(join(dir, 'config.yml'), stringify(config));
    const probe = `http://${host}/v2/`;
    try {
      server = await startServerProcess({
        name: `registry at ${host}`,
        file: bin,
        args: ['serve', join(dir, 'config.yml')],
        env: { PATH: process.env.PATH ?? '', HOME: dir, OTEL_TRACES_EXPORTER: 'none' },
        // Only the registry answers /v2/ with its API version header: anything else on the port
        // (another test's server that took it first) is not this registry being ready.
        ready: async () => {
          const res = await fetch(probe);
          return [200, 401].includes(res.status) && res.headers.get('docker-distribution-api-version') === 'registry/2.0';
        },
      });
    } catch (err) {
      if (attempt >= 3 || !/address already in use/.test(String(err))) throw err;
      log(`[registry] ${host} was taken before the registry bound it; trying another port`);
    }
  }
  log(`[registry] ready at ${host}${opts.htpasswd ? ' (htpasswd)' : opts.token ? ' (token)' : ''} in ${Date.now() - t0} ms`);
  return {
    host,
    ...(tokenHost ? { tokenHost } : {}),
    stop: async () => {
      await server.stop();
      await new Promise((r) => (tokenServer ? tokenServer.close(r) : r(undefined)));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The token service of a token-auth registry: GET /token?service=&scope=repository:NAME:pull
 * answers a JWT (ES256, its certificate in x5c, which the registry trusts through rootcertbundle)
 * granting pull of NAME when NAME is public or the Basic credentials are right; else 401.
 */
async function startTokenServer(
  dir: string,
  auth: { user: string; password: string; publicRepositories: string[] },
): Promise<{ server: Server; realm: string; certFile: string }> {
  const pems = await generate([{ name: 'commonName', value: 'plugflow-test-tokens' }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    notAfterDate: new Date(Date.now() + 24 * 3600 * 1000),
    extensions: [
      { name: 'basicConstraints', cA: true },
      { name: 'keyUsage', digitalSignature: true, keyCertSign: true },
    ],
  });
  const certFile = join(dir, 'token-cert.pem');
  writeFileSync(certFile, pems.cert);
  const key = createPrivateKey(pems.private);
  const der = pems.cert.replace(/-----[^-]+-----/g, '').replace(/\s+/g, '');
  const b64url = (v: object | Buffer): string => (Buffer.isBuffer(v) ? v : Buffer.from(JSON.stringify(v))).toString('base64url');
  const expected = `Basic ${Buffer.from(`${auth.user}:${auth.password}`).toString('base64')}`;
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://token');
    const scope = /^repository:([^:]+):([a-z,]+)$/.exec(url.searchParams.get('scope') ?? '');
    const name = scope?.[1];
    const actions = (scope?.[2] ?? '').split(',');
    const authorised = req.headers.authorization === expected;
    if (req.headers.authorization && !authorised) {
      res.writeHead(401).end('{"errors":[{"code":"UNAUTHORIZED"}]}');
      return;
    }
    // The user may push and pull; anyone may pull a public repository.
    const allowed = authorised ? actions : auth.publicRepositories.includes(name ?? '') ? actions.filter((a) => a === 'pull') : [];
    const grant = name && allowed.length ? [{ type: 'repository', name, actions: allowed }] : [];
    const now = Math.floor(Date.now() / 1000);
    const header = { typ: 'JWT', alg: 'ES256', x5c: [der] };
    const claims = {
      iss: 'plugflow-test-tokens',
      sub: authorised ? auth.user : '',
      aud: url.searchParams.get('service') ?? '',
      exp: now + 300,
      nbf: now - 10,
      iat: now,
      jti: randomUUID(),
      access: grant,
    };
    const input = `${b64url(header)}.${b64url(claims)}`;
    const signature = sign('sha256', Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' });
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ token: `${input}.${b64url(signature)}` }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  return { server, realm: `http://127.0.0.1:${port}/token`, certFile };
}
