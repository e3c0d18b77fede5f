import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import winston from 'winston';
import { describe, expect, it } from 'vitest';
import type { Template, Workflow } from '../api/index.js';
import { FakeKubeClient } from '../kube/testing/fake-kube-client.js';
import { CONFIGMAPS } from '../kube/resource.js';
import type { ImageReference } from '../images/image-reference.js';
import { RegistryError, unreadableMessage, type ImageLookup } from '../images/registry-client.js';
import { ImageEntrypoints, ImageLookupError } from './image-entrypoints.js';

const wf: Workflow = { apiVersion: 'plugflow.io/v1alpha1', kind: 'Workflow', metadata: { name: 'w', namespace: 'team' }, spec: {} };
const step = (image: string): Template => ({ name: 's', container: { image } });
const DIGEST = `sha256:${'b'.repeat(64)}`;

interface LogLine {
  level: string;
  message: string;
  [k: string]: unknown;
}

/** A JSON logger whose lines are kept for assertions. */
function captureLogger(): { log: winston.Logger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const text of chunk.toString().split('\n')) if (text.trim()) lines.push(JSON.parse(text) as LogLine);
      cb();
    },
  });
  const log = winston.createLogger({
    level: 'debug',
    format: winston.format.json(),
    transports: [new winston.transports.Stream({ stream: sink })],
  });
  return { log, lines };
}

/** A resolver whose registry is `answer`, counting the lookups it makes; `clock.now` is its time. */
function resolver(answer: (ref: ImageReference) => Promise<ImageLookup>) {
  const kube = new FakeKubeClient();
  const clock = { now: 1_000_000 };
  const asked: string[] = [];
  const { log, lines } = captureLogger();
  const images = new ImageEntrypoints({
    client: kube.asClient(),
    installNamespace: 'plugflow',
    now: () => clock.now,
    log,
    fetch: (ref) => {
      asked.push(`${ref.host}/${ref.repository}@${ref.reference}`);
      return answer(ref);
    },
  });
  return { kube, clock, asked, images, lines };
}

/** The error `p` rejects with (the test fails when it resolves). */
async function rejection(p: Promise<unknown>): Promise<Error> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(Error);
  return err as Error;
}

const TAIL = "; set the container's command, or list the image in ConfigMap plugflow/plugflow-images";

describe('ImageEntrypoints', () => {
  it('asks the registry once for a fan-out of one image, concurrent or later', async () => {
    const r = resolver(async () => {
      await new Promise((res) => setTimeout(res, 5));
      return { digest: DIGEST, entrypoint: ['/say'], cmd: ['hi'] };
    });
    const all = await Promise.all(Array.from({ length: 50 }, () => r.images.forTemplate(wf, step('reg.io/say:1'), 'default')));
    expect(new Set(all.map((m) => JSON.stringify([...m!])))).toEqual(
      new Set([JSON.stringify([['reg.io/say:1', { entrypoint: ['/say'], cmd: ['hi'] }]])]),
    );
    await r.images.forTemplate(wf, step('reg.io/say:1'), 'other-account');
    expect(r.asked).toEqual(['reg.io/say@1']);
  });

  it('keeps a tag for 5 minutes and a digest for good', async () => {
    const r = resolver(async () => ({ digest: DIGEST, entrypoint: [], cmd: ['x'] }));
    await r.images.forTemplate(wf, step('reg.io/t:1'), 'default');
    await r.images.forTemplate(wf, step(`reg.io/d@${DIGEST}`), 'default');
    r.clock.now += 5 * 60_000;
    await r.images.forTemplate(wf, step('reg.io/t:1'), 'default');
    await r.images.forTemplate(wf, step(`reg.io/d@${DIGEST}`), 'default');
    expect(r.asked).toEqual(['reg.io/t@1', `reg.io/d@${DIGEST}`, 'reg.io/t@1']);
  });

  it('remembers a failure for 30 seconds, so a fan-out fails fast, then asks again; the detail goes to the log once per lookup', async () => {
    const r = resolver(async () => {
      throw new RegistryError(unreadableMessage('reg.io'), {
        detail: 'GET https://reg.io/v2/down/manifests/1 failed: Error: connect ECONNREFUSED 10.0.0.5:443',
      });
    });
    const fail = () => r.images.forTemplate(wf, step('reg.io/down:1'), 'default');
    await expect(fail()).rejects.toThrow(ImageLookupError);
    const err = await rejection(fail());
    expect(err.message).toBe(`image "reg.io/down:1": ${unreadableMessage('reg.io')}${TAIL}`);
    expect(err.message).not.toContain('ECONNREFUSED');
    expect(r.asked).toHaveLength(1);
    expect(r.lines.filter((l) => l.level === 'warn')).toEqual([
      expect.objectContaining({
        workflow: 'team/w',
        namespace: 'team',
        image: 'reg.io/down:1',
        registry: 'reg.io',
        detail: 'GET https://reg.io/v2/down/manifests/1 failed: Error: connect ECONNREFUSED 10.0.0.5:443',
      }),
    ]);
    r.clock.now += 30_000;
    await expect(fail()).rejects.toThrow(ImageLookupError);
    expect(r.asked).toHaveLength(2);
    expect(r.lines.filter((l) => l.level === 'warn')).toHaveLength(2);
  });

  it('tells a refused anonymous pull apart by the user’s own configuration, without the status', async () => {
    const r = resolver(async () => {
      throw new RegistryError('its registry reg.io refused an anonymous pull for p', {
        unauthorized: true,
        detail: 'https://reg.io/v2/p/manifests/1 answered HTTP 401 (anonymous); 9 bytes: "SECRET-12"',
      });
    });
    const err = await rejection(r.images.forTemplate(wf, step('reg.io/p:1'), 'default'));
    expect(err).toBeInstanceOf(ImageLookupError);
    expect(err.message).toBe(
      `image "reg.io/p:1": reg.io refused an anonymous pull, and neither the workflow's imagePullSecrets nor service account team/default names a pull secret${TAIL}`,
    );
    expect(err.message).not.toMatch(/401|SECRET-12/);
  });

  it('narrows a multi-platform image to the node selector’s os and arch, each remembered apart', async () => {
    const platforms: string[] = [];
    const kube = new FakeKubeClient();
    const images = new ImageEntrypoints({
      client: kube.asClient(),
      installNamespace: 'plugflow',
      fetch: async (_ref, _cred, opts) => {
        platforms.push(`${opts.platform?.os}/${opts.platform?.architecture}`);
        return { digest: DIGEST, entrypoint: [], cmd: [opts.platform!.architecture] };
      },
    });
    const arm = await images.forTemplate(
      { ...wf, spec: { nodeSelector: { 'kubernetes.io/arch': 'arm64' } } },
      step('reg.io/m:1'),
      'default',
    );
    const s390 = await images.forTemplate(wf, { ...step('reg.io/m:1'), nodeSelector: { 'kubernetes.io/arch': 's390x' } }, 'default');
    await images.forTemplate({ ...wf, spec: { nodeSelector: { 'kubernetes.io/arch': 'arm64' } } }, step('reg.io/m:1'), 'default');
    expect(arm?.get('reg.io/m:1')?.cmd).toEqual(['arm64']);
    expect(s390?.get('reg.io/m:1')?.cmd).toEqual(['s390x']);
    expect(platforms).toEqual(['linux/arm64', 'linux/s390x']);
  });

  it('takes the operator’s ConfigMap over the registry, and refuses a broken one by name', async () => {
    const r = resolver(async () => ({ digest: DIGEST, entrypoint: ['/from-registry'], cmd: [] }));
    r.kube.seed(CONFIGMAPS, {
      metadata: { name: 'plugflow-images', namespace: 'plugflow' },
      data: { images: 'reg.io/a:1: {cmd: [listed]}\n' },
    });
    const got = await r.images.forTemplate(wf, step('reg.io/a:1'), 'default');
    expect(got?.get('reg.io/a:1')).toEqual({ entrypoint: [], cmd: ['listed'] });
    expect(r.asked).toEqual([]);
    expect(await r.images.forTemplate(wf, { name: 's', container: { image: 'reg.io/a:1', command: ['own'] } }, 'default')).toBeUndefined();

    const broken = resolver(async () => ({ digest: DIGEST, entrypoint: [], cmd: [] }));
    broken.kube.seed(CONFIGMAPS, {
      metadata: { name: 'plugflow-images', namespace: 'plugflow' },
      data: { images: 'reg.io/a:1: {cmd: listed}\n' },
    });
    await expect(broken.images.forTemplate(wf, step('reg.io/b:1'), 'default')).rejects.toThrow(
      'ConfigMap plugflow/plugflow-images key images: image "reg.io/a:1": cmd must be a list of strings',
    );
  });
});

describe('ImageEntrypoints against a loopback registry', () => {
  it('fails the step with the same words for a 500 with a body, a body that is not JSON and a closed port; the log has the detail', async () => {
    let handle: (req: IncomingMessage, res: ServerResponse) => void = () => undefined;
    // Connection: close, so that the closed port is a refused connect rather than a pooled socket.
    const server: Server = createServer((req, res) => handle(req, res));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
    const image = `${host}/team/tool:1`;
    const kube = new FakeKubeClient();
    const clock = { now: 1_000_000 };
    const { log, lines } = captureLogger();
    const images = new ImageEntrypoints({
      client: kube.asClient(),
      installNamespace: 'plugflow',
      insecureRegistries: [host],
      now: () => clock.now,
      log,
    });
    const messages: string[] = [];
    const ask = async (): Promise<void> => {
      clock.now += 60_000; // past the remembered failure
      const err = await images.forTemplate(wf, step(image), 'default').catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ImageLookupError);
      messages.push((err as Error).message);
    };
    try {
      handle = (_req, res) => {
        res.writeHead(500, { 'content-type': 'text/plain', connection: 'close' });
        res.end('SECRET-BODY-123');
      };
      await ask();
      handle = (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/vnd.oci.image.manifest.v1+json', connection: 'close' });
        res.end('SECRET-BODY-123 {not json');
      };
      await ask();
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
    await ask(); // nothing listens on that port any more

    expect(messages).toHaveLength(3);
    expect(new Set(messages)).toEqual(new Set([`image "${image}": ${unreadableMessage(host)}${TAIL}`]));
    const own = messages[0]!.replaceAll(host, 'HOST');
    expect(own).not.toContain('SECRET-BODY-123');
    expect(own).not.toMatch(/500|ECONNREFUSED|JSON/);

    const warned = lines.filter((l) => l.level === 'warn');
    expect(warned).toHaveLength(3);
    for (const l of warned)
      expect(l).toMatchObject({ workflow: 'team/w', namespace: 'team', image, registry: host, reason: unreadableMessage(host) });
    expect(warned[0]!.detail).toMatch(/answered HTTP 500.*SECRET-BODY-123/);
    expect(warned[1]!.detail).toMatch(/is not JSON.*SECRET-BODY-123/);
    expect(warned[2]!.detail).toContain('ECONNREFUSED');
  });
});
