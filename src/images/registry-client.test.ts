/**
 * The registry client against real registries on 127.0.0.1 (node:http and node:https on port 0):
 * redirects keep the first hop's rule (plain HTTP only to hosts listed as insecure), and what the
 * workflow may read of a failure is the same whatever the remote answered.
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { Agent, getGlobalDispatcher, setGlobalDispatcher, type Dispatcher } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { generateSelfSigned, type TlsMaterial } from '../tls/tls-material.js';
import { parseImageReference } from './image-reference.js';
import { fetchImageCommand, notHttpsMessage, parseChallenge, RegistryError, unreadableMessage } from './registry-client.js';

describe('parseChallenge', () => {
  it('reads a Bearer challenge with quoted parameters', () => {
    expect(parseChallenge('Bearer realm="https://auth.example/token",service="registry.example",scope="repository:a/b:pull"')).toEqual({
      scheme: 'bearer',
      params: { realm: 'https://auth.example/token', service: 'registry.example', scope: 'repository:a/b:pull' },
    });
  });
  it('reads Basic and unquoted parameters, and nothing from an empty header', () => {
    expect(parseChallenge('Basic realm=Registry')).toEqual({ scheme: 'basic', params: { realm: 'Registry' } });
    expect(parseChallenge(undefined)).toBeUndefined();
  });
});

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** A server on 127.0.0.1 whose handler a test sets, recording the requests it got. */
interface Loopback {
  host: string;
  port: number;
  seen: { url: string; authorization?: string }[];
  handle: Handler;
  close(): Promise<void>;
}

const sha256 = (b: Buffer): string => `sha256:${createHash('sha256').update(b).digest('hex')}`;

/** An image: its config blob and the manifest naming it. */
function image(entrypoint: string[], cmd: string[]) {
  const config = Buffer.from(JSON.stringify({ architecture: 'amd64', os: 'linux', config: { Entrypoint: entrypoint, Cmd: cmd } }));
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: 'application/vnd.oci.image.manifest.v1+json',
      config: { mediaType: 'application/vnd.oci.image.config.v1+json', digest: sha256(config), size: config.length },
      layers: [],
    }),
  );
  return { config, configDigest: sha256(config), manifest, digest: sha256(manifest) };
}
const IMG = image(['/bin/tool'], ['--serve']);

/** Serves IMG's manifest and config under any repository; anything else 404. */
function serveImage(req: IncomingMessage, res: ServerResponse): void {
  const url = req.url ?? '';
  if (/\/manifests\//.test(url)) {
    res.writeHead(200, { 'content-type': 'application/vnd.oci.image.manifest.v1+json', 'docker-content-digest': IMG.digest });
    return void res.end(IMG.manifest);
  }
  if (url.endsWith(`/blobs/${IMG.configDigest}`)) {
    res.writeHead(200, { 'content-type': 'application/octet-stream' });
    return void res.end(IMG.config);
  }
  res.writeHead(404);
  res.end();
}

async function loopback(tls?: TlsMaterial): Promise<Loopback> {
  const lb: Loopback = {
    host: '',
    port: 0,
    seen: [],
    handle: serveImage,
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
  const handler: Handler = (req, res) => {
    lb.seen.push({ url: req.url ?? '', ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}) });
    lb.handle(req, res);
  };
  const server: Server = tls ? createTlsServer({ cert: tls.cert, key: tls.key }, handler) : createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  lb.port = (server.address() as AddressInfo).port;
  lb.host = `127.0.0.1:${lb.port}`;
  return lb;
}

const redirect = (res: ServerResponse, to: string): void => {
  res.writeHead(307, { location: to });
  res.end();
};

/** The error a lookup of `host/team/tool:1` throws. */
async function failure(host: string, insecure: string[], credential?: { username: string; password: string }): Promise<RegistryError> {
  const err = await fetchImageCommand(
    parseImageReference(`${host}/team/tool:1`),
    credential ? { ...credential, source: 'secret regcred' } : undefined,
    { insecureHosts: new Set(insecure), timeoutMs: 3_000 },
  ).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(RegistryError);
  return err as RegistryError;
}

describe('fetchImageCommand on loopback registries', () => {
  let pem: TlsMaterial;
  let previous: Dispatcher;
  const open: Loopback[] = [];
  const start = async (tls?: TlsMaterial): Promise<Loopback> => {
    const lb = await loopback(tls);
    open.push(lb);
    return lb;
  };

  beforeAll(async () => {
    pem = await generateSelfSigned();
    // undici's request (the client's) trusts the test's self-signed certificate; nothing else changes.
    previous = getGlobalDispatcher();
    setGlobalDispatcher(new Agent({ connect: { ca: pem.cert } }));
  });
  afterEach(async () => {
    await Promise.all(open.splice(0).map((lb) => lb.close()));
  });
  afterAll(() => {
    setGlobalDispatcher(previous);
  });

  it('reads ENTRYPOINT and CMD from an insecure registry over HTTP, and from an HTTPS one', async () => {
    const plain = await start();
    const secure = await start(pem);
    for (const [lb, insecure] of [
      [plain, [plain.host]],
      [secure, []],
    ] as const) {
      const got = await fetchImageCommand(parseImageReference(`${lb.host}/team/tool:1`), undefined, { insecureHosts: new Set(insecure) });
      expect(got).toEqual({ digest: IMG.digest, entrypoint: ['/bin/tool'], cmd: ['--serve'] });
    }
  });

  it('refuses an insecure registry’s redirect to plain HTTP on a host that is not listed, naming the registry only', async () => {
    const registry = await start();
    const elsewhere = await start();
    registry.handle = (req, res) =>
      req.url?.includes('/blobs/') ? redirect(res, `http://${elsewhere.host}/storage/blob`) : serveImage(req, res);
    elsewhere.handle = (_req, res) => res.end(IMG.config);
    const err = await failure(registry.host, [registry.host]);
    expect(err.message).toBe(notHttpsMessage(registry.host, 'redirect'));
    expect(err.message).toContain('a redirect to plain HTTP is not followed');
    expect(err.message).not.toContain(String(elsewhere.port));
    expect(err.detail).toContain(`http://${elsewhere.host}/storage/blob`);
    expect(elsewhere.seen).toEqual([]);

    // The same redirect to a listed host is followed (without the registry's Authorization).
    const got = await fetchImageCommand(parseImageReference(`${registry.host}/team/tool:1`), undefined, {
      insecureHosts: new Set([registry.host, elsewhere.host]),
    });
    expect(got.entrypoint).toEqual(['/bin/tool']);
    expect(elsewhere.seen.map((s) => s.url)).toEqual(['/storage/blob']);
  });

  it('refuses an HTTPS registry’s redirect to plain HTTP unless the target host itself is listed; HTTPS goes anywhere', async () => {
    const registry = await start(pem);
    const storage = await start(pem);
    const plain = await start();
    let target = `http://${plain.host}/blob`;
    registry.handle = (req, res) => (req.url?.includes('/manifests/') ? redirect(res, target) : serveImage(req, res));

    // https → http on a host not listed (the registry's own host is not listed either: its first hop is HTTPS).
    const err = await failure(registry.host, []);
    expect(err.message).toBe(notHttpsMessage(registry.host, 'redirect'));
    expect(err.message).not.toContain(String(plain.port));
    expect(err.unauthorized).toBe(false);
    expect(registry.seen.map((s) => s.url)).toEqual(['/v2/team/tool/manifests/1']);
    expect(plain.seen).toEqual([]);

    // Another scheme is refused the same way.
    target = 'ftp://127.0.0.1/blob';
    expect((await failure(registry.host, [])).message).toBe(notHttpsMessage(registry.host, 'redirect'));

    // https → http where the target is listed, and https → https anywhere, are followed.
    target = `http://${plain.host}/v2/team/tool/manifests/1`;
    const viaPlain = await fetchImageCommand(parseImageReference(`${registry.host}/team/tool:1`), undefined, {
      insecureHosts: new Set([plain.host]),
    });
    expect(viaPlain.cmd).toEqual(['--serve']);
    target = `https://${storage.host}/v2/team/tool/manifests/1`;
    const viaHttps = await fetchImageCommand(parseImageReference(`${registry.host}/team/tool:1`), undefined, {});
    expect(viaHttps.cmd).toEqual(['--serve']);
    expect(storage.seen.map((s) => s.url)).toEqual(['/v2/team/tool/manifests/1']);
  });

  it('applies the same rule to the token request’s redirects, and sends the credential to the realm’s origin only', async () => {
    const registry = await start();
    const elsewhere = await start();
    registry.handle = (req, res) => {
      if (req.url?.startsWith('/token')) return redirect(res, `http://${elsewhere.host}/token`);
      if (req.headers.authorization !== 'Bearer tok-1') {
        res.writeHead(401, { 'www-authenticate': `Bearer realm="http://${registry.host}/token",service="reg"` });
        return void res.end();
      }
      serveImage(req, res);
    };
    elsewhere.handle = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ token: 'tok-1' }));
    };
    const cred = { username: 'u', password: 'p' };
    const err = await failure(registry.host, [registry.host], cred);
    expect(err.message).toBe(notHttpsMessage(registry.host, 'redirect'));
    expect(elsewhere.seen).toEqual([]);

    const got = await fetchImageCommand(
      parseImageReference(`${registry.host}/team/tool:1`),
      { ...cred, source: 'secret regcred' },
      { insecureHosts: new Set([registry.host, elsewhere.host]) },
    );
    expect(got.entrypoint).toEqual(['/bin/tool']);
    expect(elsewhere.seen).toHaveLength(1);
    expect(elsewhere.seen[0]!.authorization).toBeUndefined();
    expect(registry.seen.find((s) => s.url.startsWith('/token'))?.authorization).toBe(`Basic ${Buffer.from('u:p').toString('base64')}`);
  });

  it('says the same, with nothing the remote sent, for a 500 with a body, a 404, a body that is not JSON and a closed port', async () => {
    const registry = await start();
    const host = registry.host;
    const messages: string[] = [];
    const details: string[] = [];
    const ask = async (): Promise<void> => {
      const err = await failure(host, [host]);
      expect(err.unauthorized).toBe(false);
      messages.push(err.message);
      details.push(err.detail);
    };
    // Connection: close, so that the closed port below is a refused connect, not a pooled socket.
    registry.handle = (_req, res) => {
      res.writeHead(500, { 'content-type': 'text/plain', connection: 'close' });
      res.end('SECRET-BODY-123');
    };
    await ask();
    registry.handle = (_req, res) => {
      res.writeHead(404, { 'content-type': 'application/json', connection: 'close' });
      res.end('{"errors":[{"code":"MANIFEST_UNKNOWN","message":"SECRET-BODY-123"}]}');
    };
    await ask();
    registry.handle = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/vnd.oci.image.manifest.v1+json', connection: 'close' });
      res.end('SECRET-BODY-123 is not a manifest');
    };
    await ask();
    await registry.close();
    open.splice(open.indexOf(registry), 1);
    await ask(); // the same host:port, nothing listening there now

    expect(new Set(messages)).toEqual(new Set([unreadableMessage(host)]));
    for (const m of messages) {
      const own = m.replaceAll(host, 'HOST');
      expect(own).not.toContain('SECRET-BODY-123');
      expect(own).not.toMatch(/500|404|ECONNREFUSED|JSON|Unexpected token/);
    }
    expect(details[0]).toContain('answered HTTP 500');
    expect(details[0]).toContain('SECRET-BODY-123');
    expect(details[1]).toContain('answered HTTP 404');
    expect(details[2]).toContain('is not JSON');
    expect(details[2]).toContain('SECRET-BODY-123 is not a manifest');
    expect(details[3]).toContain('ECONNREFUSED');
  });

  it('tells refused credentials apart (which secret, no status), and a missing platform without the remote’s list', async () => {
    const registry = await start();
    registry.handle = (_req, res) => {
      res.writeHead(403, { 'content-type': 'text/plain' });
      res.end('SECRET-BODY-123');
    };
    const err = await failure(registry.host, [registry.host], { username: 'u', password: 'p' });
    expect(err.unauthorized).toBe(true);
    expect(err.message).toBe(`its registry ${registry.host} refused the credentials of secret regcred for team/tool`);
    expect(err.detail).toContain('HTTP 403');

    const index = Buffer.from(
      JSON.stringify({
        schemaVersion: 2,
        mediaType: 'application/vnd.oci.image.index.v1+json',
        manifests: [{ digest: IMG.digest, platform: { os: 'SECRET-OS', architecture: 'amd64' } }],
      }),
    );
    registry.handle = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/vnd.oci.image.index.v1+json' });
      res.end(index);
    };
    const noPlatform = await fetchImageCommand(parseImageReference(`${registry.host}/team/tool:1`), undefined, {
      insecureHosts: new Set([registry.host]),
      platform: { os: 'linux', architecture: 'riscv64' },
    }).catch((e: unknown) => e as RegistryError);
    expect(noPlatform).toBeInstanceOf(RegistryError);
    expect((noPlatform as RegistryError).message).toBe(
      `its registry ${registry.host} has no linux/riscv64 manifest in the image's index (the controller's log lists the platforms it has)`,
    );
    expect((noPlatform as RegistryError).detail).toContain('SECRET-OS/amd64');
  });
});
