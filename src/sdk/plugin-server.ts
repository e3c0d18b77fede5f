/**
 * A plugin server in a few lines:
 *
 *   await servePlugin({ name: 'hello', port: 4355, execute: (config, ctx) => succeeded(`hi ${config.who}`) });
 *
 * The protocol rules are handled here so a plugin only writes its logic (spec document 000
 * "Plugin endpoint" and "Authentication"):
 * - any path other than `POST /api/v1/template.execute` → 404 (the agent then never calls
 *   the method again in this workflow);
 * - `Authorization` not equal to `Bearer <token file content, trimmed>` → 403 with no body; the
 *   file is read on each request so a replaced token is honoured at once;
 * - a template whose `plugin` section is not this plugin's → `{}` without calling the handler;
 * - the handler's reply (or `{}` when it returns nothing) as JSON; a thrown error → 500 with its
 *   message, which the agent turns into a failed node.
 */
import { timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  PLUGIN_EXECUTE_PATH,
  PLUGIN_TOKEN_PATH,
  type ExecuteTemplateArgs,
  type ExecuteTemplateReply,
  type Template,
} from '../api/index.js';
import { errorMessage } from '../log/error-message.js';

export interface PluginContext {
  workflow: { name: string; namespace: string; uid: string };
  template: Template;
  args: ExecuteTemplateArgs;
}

export type ExecuteHandler<C> = (
  config: C,
  ctx: PluginContext,
) => ExecuteTemplateReply | undefined | Promise<ExecuteTemplateReply | undefined>;

export interface PluginServerOptions<C> {
  /** The plugin's name: the key of the template's `plugin` section it serves. */
  name: string;
  execute: ExecuteHandler<C>;
  /** Default `/var/run/workflow/token`. */
  tokenPath?: string;
  /** Largest request body accepted; default 10 MiB. */
  maxBodyBytes?: number;
}

export interface RunningPlugin {
  server: Server;
  port: number;
  url: string;
  close(): Promise<void>;
}

/** The request handler, for use with any node:http server. */
export function pluginRequestHandler<C>(opts: PluginServerOptions<C>): (req: IncomingMessage, res: ServerResponse) => void {
  const tokenPath = opts.tokenPath ?? PLUGIN_TOKEN_PATH;
  const maxBody = opts.maxBodyBytes ?? 10 * 1024 * 1024;
  return (req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (req.method !== 'POST' || path !== PLUGIN_EXECUTE_PATH) return end(res, 404);
    if (!authorized(req.headers.authorization, tokenPath)) return end(res, 403);
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > maxBody) {
        end(res, 413, { message: `request body over ${maxBody} bytes` });
        req.destroy();
      } else chunks.push(c);
    });
    req.on('end', () => {
      if (res.writableEnded) return;
      let args: ExecuteTemplateArgs;
      try {
        args = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ExecuteTemplateArgs;
        if (!args || typeof args !== 'object' || !args.template || typeof args.template !== 'object') throw new Error('no template');
      } catch (err) {
        return end(res, 400, { message: `request body is not an ExecuteTemplateArgs: ${errorMessage(err)}` });
      }
      const section = args.template.plugin;
      if (!section || typeof section !== 'object' || !(opts.name in section)) return end(res, 200, {});
      const meta = args.workflow?.metadata ?? {};
      const ctx: PluginContext = {
        workflow: { name: meta.name ?? '', namespace: meta.namespace ?? '', uid: meta.uid ?? '' },
        template: args.template,
        args,
      };
      Promise.resolve()
        .then(() => opts.execute(section[opts.name] as C, ctx))
        .then(
          (reply) => end(res, 200, reply ?? {}),
          (err: unknown) => end(res, 500, { message: err instanceof Error ? err.message : String(err) }),
        );
    });
  };
}

/** Creates a server (not yet listening). */
export function createPluginServer<C>(opts: PluginServerOptions<C>): Server {
  const server = createServer(pluginRequestHandler(opts));
  server.keepAliveTimeout = 60_000;
  return server;
}

/** Creates and starts a server; port 0 picks a free port. */
export async function servePlugin<C>(opts: PluginServerOptions<C> & { port: number; host?: string }): Promise<RunningPlugin> {
  const server = createPluginServer(opts);
  const host = opts.host ?? '0.0.0.0';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    server,
    port,
    url: `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function authorized(header: string | undefined, tokenPath: string): boolean {
  let token: string;
  try {
    token = readFileSync(tokenPath, 'utf8').trim();
  } catch {
    return false; // no token, no access
  }
  if (!token || !header) return false;
  const want = Buffer.from(`Bearer ${token}`);
  const got = Buffer.from(header);
  return want.length === got.length && timingSafeEqual(want, got);
}

function end(res: ServerResponse, status: number, body?: unknown): void {
  if (res.writableEnded) return;
  if (body === undefined) {
    res.writeHead(status, { 'content-length': '0' });
    res.end();
    return;
  }
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) });
  res.end(text);
}
