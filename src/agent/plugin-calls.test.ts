/**
 * Every row of the plugin call table, end to end through the real RPC client (undici) and the
 * task runner, against real HTTP servers on 127.0.0.1 that answer as a plugin would.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import winston from 'winston';
import type { NodeResult, Template } from '../api/index.js';
import { NO_PLUGIN_MESSAGE, type RetryPolicy } from './call-machine.js';
import { PluginClient, type PluginTarget } from './plugin-client.js';
import { runTask, type TaskRunnerDeps } from './task-runner.js';
import { WorkerPool } from './worker-pool.js';

type Handler = (req: IncomingMessage & { body: string }, res: ServerResponse, n: number) => void;

interface FakePlugin {
  name: string;
  port: number;
  calls: Array<{ method?: string; url?: string; headers: IncomingMessage['headers']; body: string }>;
  close(): Promise<void>;
}

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((o) => o.close()));
});

/** A real HTTP server on loopback; `handler` gets the call number (1-based). */
async function plugin(name: string, handler: Handler, port = 0): Promise<FakePlugin> {
  const calls: FakePlugin['calls'] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      calls.push({ method: req.method, url: req.url, headers: req.headers, body });
      handler(Object.assign(req, { body }), res, calls.length);
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  const p: FakePlugin = {
    name,
    port: (server.address() as AddressInfo).port,
    calls,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
  open.push(p);
  return p;
}

const json = (res: ServerResponse, status: number, body: unknown) => {
  const text = body === undefined ? '' : typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
};
const node = (phase: string, extra: object = {}) => ({ node: { phase, ...extra } });

/** A free port with nothing listening on it (yet). */
async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

function captureLogger(): { log: winston.Logger; text: () => string } {
  let out = '';
  const stream = new Writable({
    write(chunk, _enc, cb) {
      out += chunk.toString();
      cb();
    },
  });
  const log = winston.createLogger({
    level: 'debug',
    format: winston.format.json(),
    transports: [new winston.transports.Stream({ stream })],
  });
  return { log, text: () => out };
}

const FAST_RETRY: RetryPolicy = { attempts: 5, baseDelayMs: 10, jitter: 0.2 };

interface Harness {
  reports: Array<[string, NodeResult]>;
  run(nodeId: string, template: Template): Promise<NodeResult>;
  notImplemented: Set<string>;
  logs: () => string;
}

function harness(
  targets: Array<{ name: string; port: number; token?: string }>,
  opts: { timeoutMs?: number; retry?: RetryPolicy } = {},
): Harness {
  const pluginTargets: PluginTarget[] = targets.map((t) => ({
    name: t.name,
    address: `http://127.0.0.1:${t.port}`,
    token: t.token ?? `tok-${t.name}`,
  }));
  const client = new PluginClient(pluginTargets, { timeoutMs: opts.timeoutMs ?? 2000 });
  open.push({ close: () => client.close() });
  const reports: Array<[string, NodeResult]> = [];
  const { log, text } = captureLogger();
  const deps: TaskRunnerDeps = {
    workflow: { name: 'wf', namespace: 'ns', uid: 'uid-1' },
    plugins: pluginTargets.map((t) => t.name).sort(),
    callPlugin: (p, body) => client.execute(p, body),
    runHttp: async () => ({ phase: 'Failed', message: 'not used' }),
    notImplemented: new Set(),
    pool: new WorkerPool(4),
    report: (id, r) => reports.push([id, r]),
    log,
    retry: opts.retry ?? FAST_RETRY,
  };
  return {
    reports,
    notImplemented: deps.notImplemented,
    logs: text,
    async run(nodeId, template) {
      await runTask(nodeId, template, deps, new AbortController().signal);
      const mine = reports.filter(([id]) => id === nodeId);
      return mine[mine.length - 1]![1];
    },
  };
}

const tpl = (plugin: string, config: object = {}): Template => ({ name: 'step', plugin: { [plugin]: config } });

describe('plugin calls against real HTTP servers', () => {
  it('sends POST /api/v1/template.execute with JSON, bearer token, Content-Length and the args', async () => {
    const a = await plugin('a', (_req, res) => json(res, 200, node('Succeeded', { message: 'hi' })));
    const h = harness([{ name: 'a', port: a.port, token: 's3cret-token' }]);
    const template = tpl('a', { x: 1 });
    expect(await h.run('n1', template)).toEqual({ phase: 'Succeeded', message: 'hi' });
    const call = a.calls[0]!;
    expect(call.method).toBe('POST');
    expect(call.url).toBe('/api/v1/template.execute');
    expect(call.headers['content-type']).toBe('application/json');
    expect(call.headers.authorization).toBe('Bearer s3cret-token');
    expect(Number(call.headers['content-length'])).toBe(Buffer.byteLength(call.body));
    expect(JSON.parse(call.body)).toEqual({ workflow: { metadata: { name: 'wf', namespace: 'ns', uid: 'uid-1' } }, template });
  });

  it('node → that result, with outputs and progress', async () => {
    const outputs = { parameters: [{ name: 'greeting', value: 'hello' }] };
    const a = await plugin('a', (_req, res) => json(res, 200, node('Succeeded', { message: 'ok', outputs, progress: '1/1' })));
    expect(await harness([a]).run('n', tpl('a'))).toEqual({ phase: 'Succeeded', message: 'ok', outputs, progress: '1/1' });
  });

  it('the plugin named by the template is called first, the others only if it declines', async () => {
    const a = await plugin('a', (_req, res) => json(res, 200, node('Succeeded', { message: 'from a' })));
    const b = await plugin('b', (_req, res) => json(res, 200, node('Succeeded', { message: 'from b' })));
    expect(await harness([a, b]).run('n', tpl('b'))).toEqual({ phase: 'Succeeded', message: 'from b' });
    expect(a.calls).toHaveLength(0);
  });

  it('`{}` → next plugin', async () => {
    const a = await plugin('a', (_req, res) => json(res, 200, {}));
    const b = await plugin('b', (_req, res) => json(res, 200, node('Succeeded')));
    expect(await harness([a, b]).run('n', tpl('a'))).toEqual({ phase: 'Succeeded' });
    expect([a.calls.length, b.calls.length]).toEqual([1, 1]);
  });

  it('`null` → next plugin', async () => {
    const a = await plugin('a', (_req, res) => json(res, 200, 'null'));
    const b = await plugin('b', (_req, res) => json(res, 200, node('Succeeded')));
    expect(await harness([a, b]).run('n', tpl('a'))).toEqual({ phase: 'Succeeded' });
  });

  it('empty 200 body → fatal, no other plugin called', async () => {
    const a = await plugin('a', (_req, res) => json(res, 200, ''));
    const b = await plugin('b', (_req, res) => json(res, 200, node('Succeeded')));
    const r = await harness([a, b]).run('n', tpl('a'));
    expect(r.phase).toBe('Failed');
    expect(r.message).toMatch(/^plugin a replied 200 with an empty body/);
    expect(b.calls).toHaveLength(0);
  });

  it('non-JSON 200 body → fatal', async () => {
    const a = await plugin('a', (_req, res) => json(res, 200, '<html>oops</html>'));
    const r = await harness([a]).run('n', tpl('a'));
    expect(r).toEqual({ phase: 'Failed', message: 'plugin a replied 200 with a body that is not JSON: <html>oops</html>' });
  });

  it('404 → next plugin, and the 404 plugin is called once per workflow', async () => {
    const a = await plugin('a', (_req, res) => json(res, 404, 'not found'));
    const b = await plugin('b', (_req, res) => json(res, 200, node('Succeeded')));
    const h = harness([a, b]);
    expect(await h.run('n1', tpl('a'))).toEqual({ phase: 'Succeeded' });
    expect(await h.run('n2', tpl('a'))).toEqual({ phase: 'Succeeded' });
    expect(await h.run('n3', tpl('b'))).toEqual({ phase: 'Succeeded' });
    expect(a.calls).toHaveLength(1);
    expect(b.calls).toHaveLength(3);
    expect([...h.notImplemented]).toEqual(['a']);
  });

  it('503 then success → retried with backoff', async () => {
    const a = await plugin('a', (_req, res, n) => (n < 3 ? json(res, 503, 'busy') : json(res, 200, node('Succeeded'))));
    expect(await harness([a]).run('n', tpl('a'))).toEqual({ phase: 'Succeeded' });
    expect(a.calls).toHaveLength(3);
  });

  it('503 every time → fatal after 5 attempts', async () => {
    const a = await plugin('a', (_req, res) => json(res, 503, 'busy'));
    const r = await harness([a]).run('n', tpl('a'));
    expect(r).toEqual({ phase: 'Failed', message: 'plugin a failed 5 times: 503: busy' });
    expect(a.calls).toHaveLength(5);
  });

  it('connection refused then success', async () => {
    const port = await freePort();
    const h = harness([{ name: 'a', port }], { retry: { attempts: 5, baseDelayMs: 150, jitter: 0 } });
    let starting: Promise<FakePlugin> | undefined;
    // Start the plugin after the first attempt has been refused.
    const late = setTimeout(() => {
      starting = plugin('a', (_req, res) => json(res, 200, node('Succeeded')), port);
    }, 60);
    const r = await h.run('n', tpl('a'));
    clearTimeout(late);
    expect(r).toEqual({ phase: 'Succeeded' });
    const started = await starting;
    expect(started!.calls.length).toBeGreaterThanOrEqual(1);
    expect(h.logs()).toMatch(/ECONNREFUSED/);
  });

  it('connection refused every time → fatal naming the cause', async () => {
    const port = await freePort();
    const r = await harness([{ name: 'a', port }]).run('n', tpl('a'));
    expect(r.phase).toBe('Failed');
    expect(r.message).toMatch(/^plugin a failed 5 times: .*ECONNREFUSED/);
  });

  it('a hang past the client timeout is transient; the next answer counts', async () => {
    const a = await plugin('a', (_req, res, n) => {
      if (n === 1) return; // never answer
      json(res, 200, node('Succeeded'));
    });
    const h = harness([a], { timeoutMs: 150 });
    expect(await h.run('n', tpl('a'))).toEqual({ phase: 'Succeeded' });
    expect(a.calls).toHaveLength(2);
    expect(h.logs()).toContain('no reply within 0.15s');
  });

  it('unexpected EOF (connection cut mid-reply) is transient', async () => {
    const a = await plugin('a', (_req, res, n) => {
      if (n === 1) {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
        res.write('{"node":');
        setTimeout(() => res.socket?.destroy(), 10);
        return;
      }
      json(res, 200, node('Succeeded'));
    });
    expect(await harness([a]).run('n', tpl('a'))).toEqual({ phase: 'Succeeded' });
    expect(a.calls).toHaveLength(2);
  });

  it('403 → fatal `403: ` saying the body was empty, never retried', async () => {
    const a = await plugin('a', (_req, res) => json(res, 403, ''));
    const b = await plugin('b', (_req, res) => json(res, 200, node('Succeeded')));
    expect(await harness([a, b]).run('n', tpl('a'))).toEqual({ phase: 'Failed', message: '403: Forbidden (plugin a sent no body)' });
    expect(a.calls).toHaveLength(1);
    expect(b.calls).toHaveLength(0);
  });

  it('500 → fatal `500: <body>`', async () => {
    const a = await plugin('a', (_req, res) => json(res, 500, 'database is down'));
    expect(await harness([a]).run('n', tpl('a'))).toEqual({ phase: 'Failed', message: '500: database is down' });
    expect(a.calls).toHaveLength(1);
  });

  it('invalid requeue → fatal with a clear message', async () => {
    const a = await plugin('a', (_req, res) => json(res, 200, { ...node('Running'), requeue: 'in a while' }));
    const r = await harness([a]).run('n', tpl('a'));
    expect(r.phase).toBe('Failed');
    expect(r.message).toMatch(/^plugin a replied with an invalid requeue: "in a while" is not a valid duration/);
    const b = await plugin('b', (_req, res) => json(res, 200, { ...node('Running'), requeue: 30 }));
    expect((await harness([b]).run('n', tpl('b'))).message).toMatch(/^plugin b replied with an invalid requeue: must be a duration string/);
  });

  it('requeue then Succeeded → interim reports, then the result', async () => {
    const a = await plugin('a', (_req, res, n) =>
      n < 3
        ? json(res, 200, { ...node(n === 1 ? 'Pending' : 'Running', { message: `poll ${n}`, progress: `${n}/3` }), requeue: '50ms' })
        : json(res, 200, { ...node('Succeeded', { message: 'done', progress: '3/3' }), requeue: '1h' }),
    );
    const h = harness([a]);
    const t0 = Date.now();
    expect(await h.run('n', tpl('a'))).toEqual({ phase: 'Succeeded', message: 'done', progress: '3/3' });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(90);
    expect(h.reports.map(([, r]) => `${r.phase} ${r.progress}`)).toEqual(['Pending 1/3', 'Running 2/3', 'Succeeded 3/3']);
    expect(a.calls).toHaveLength(3);
  });

  it('no plugin answering → Failed "no plugin executed the template"', async () => {
    const a = await plugin('a', (_req, res) => json(res, 200, {}));
    const b = await plugin('b', (_req, res) => json(res, 404, ''));
    expect(await harness([a, b]).run('n', tpl('zzz'))).toEqual({ phase: 'Failed', message: NO_PLUGIN_MESSAGE });
    expect(await harness([]).run('n', tpl('zzz'))).toEqual({ phase: 'Failed', message: NO_PLUGIN_MESSAGE });
  });

  it('never logs a token, whatever happens', async () => {
    const token = 'TOKEN-must-not-leak-4f9a';
    const a = await plugin('a', (req, res, n) => {
      if (n === 1) return json(res, 503, `echo ${req.headers.authorization === `Bearer ${token}` ? 'x' : 'y'}`);
      if (n === 2) return req.socket.destroy();
      json(res, 403, '');
    });
    const h = harness([{ name: 'a', port: a.port, token }]);
    await h.run('n', tpl('a'));
    expect(h.logs().length).toBeGreaterThan(0);
    expect(h.logs()).not.toContain(token);
    expect(JSON.stringify(h.reports)).not.toContain(token);
  });
});
