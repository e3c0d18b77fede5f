/**
 * The web UI, served by the API server on its own port (same TLS): `make build` bundles ui/ into
 * dist/ui (hack/build-ui.ts), and these routes serve those files from memory. No CDN, nothing
 * fetched at run time. Registered outside workflowRoutes: the page itself needs no token (it asks
 * for one and sends it on every API call).
 *
 *   GET /                 index.html (the UI routes by the URL's #fragment, so one page serves all)
 *   GET /ui/{file}        the bundle's files (app.js, app.css, favicon.svg)
 *
 * Files are read once at start and sent gzipped when the browser accepts it, with an ETag, and a
 * Content-Security-Policy that allows only this origin's scripts, styles and API.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { HttpError, Code } from '../errors.js';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.map': 'application/json',
};

const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

interface UiFile {
  type: string;
  body: Buffer;
  gzip: Buffer;
  etag: string;
}

/** dist/ui beside this file once built (dist/server/routes → dist/ui), or from the sources (src/server/routes → dist/ui). */
export function uiDirectory(): string | undefined {
  for (const rel of ['../../ui/', '../../../dist/ui/']) {
    const dir = fileURLToPath(new URL(rel, import.meta.url));
    if (existsSync(`${dir}index.html`)) return dir;
  }
  return undefined;
}

function loadFiles(dir: string): Map<string, UiFile> {
  const files = new Map<string, UiFile>();
  for (const name of readdirSync(dir)) {
    const ext = name.slice(name.lastIndexOf('.'));
    const type = TYPES[ext];
    if (!type) continue;
    const body = readFileSync(`${dir}${name}`);
    files.set(name, {
      type,
      body,
      gzip: gzipSync(body, { level: 9 }),
      etag: `"${createHash('sha256').update(body).digest('hex').slice(0, 16)}"`,
    });
  }
  return files;
}

export async function uiRoutes(app: FastifyInstance, opts: { dir?: string } = {}): Promise<void> {
  const dir = opts.dir ?? uiDirectory();
  const files = dir ? loadFiles(dir) : new Map<string, UiFile>();
  const send = (name: string, req: FastifyRequest, reply: FastifyReply) => {
    const f = files.get(name);
    if (!f) {
      if (name === 'index.html')
        throw new HttpError(
          Code.Unavailable,
          'the web UI is not built into this installation: run `make build` (it bundles ui/ into dist/ui)',
        );
      throw new HttpError(Code.NotFound, `no such file of the web UI: ${name}`);
    }
    void reply.headers({ ...SECURITY_HEADERS, 'content-type': f.type, etag: f.etag, 'cache-control': 'no-cache', vary: 'accept-encoding' });
    if (req.headers['if-none-match'] === f.etag) return reply.code(304).send();
    if (/\bgzip\b/.test(req.headers['accept-encoding'] ?? '')) return reply.header('content-encoding', 'gzip').send(f.gzip);
    return reply.send(f.body);
  };
  app.get('/', (req, reply) => send('index.html', req, reply));
  app.get('/ui/:file', (req: FastifyRequest<{ Params: { file: string } }>, reply) => send(req.params.file, req, reply));
}
