/**
 * The example plugins for real: the Python hello plugin started exactly as its built ConfigMap
 * says (command + the server.py text as the single argument), and the TypeScript progress plugin
 * on the SDK; both called through the agent's RPC client and probed by `plugflow plugin check`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { startProgressPlugin } from '../../examples/plugins/progress/main.js';
import type { NodeResult, Template } from '../api/index.js';
import { createLogger } from '../log/logger.js';
import { runPluginCheck } from '../cli/plugin.js';
import { parsePluginConfigMap } from '../plugins/parse-configmap.js';
import { PluginClient } from './plugin-client.js';
import { runTask } from './task-runner.js';
import { WorkerPool } from './worker-pool.js';

const ROOT = resolve(import.meta.dirname, '..', '..');
const TOKEN = 'hello-token-0123456789';

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

/** Runs one plugin task through the real client and runner; returns every report. */
async function runThrough(address: string, token: string, template: Template, plugins = ['hello']): Promise<NodeResult[]> {
  const client = new PluginClient(
    plugins.map((name) => ({ name, address, token })),
    { timeoutMs: 5000 },
  );
  const reports: NodeResult[] = [];
  try {
    await runTask(
      'node-1',
      template,
      {
        workflow: { name: 'wf', namespace: 'ns', uid: 'u1' },
        plugins,
        callPlugin: (p, b) => client.execute(p, b),
        runHttp: async () => ({ phase: 'Failed' }),
        notImplemented: new Set(),
        pool: new WorkerPool(2),
        report: (_id, r) => reports.push(r),
        log: createLogger('test', 'error'),
        retry: { attempts: 2, baseDelayMs: 10, jitter: 0 },
      },
      new AbortController().signal,
    );
  } finally {
    await client.close();
  }
  return reports;
}

function printer() {
  const lines: string[] = [];
  return { lines, p: { out: (l: string) => lines.push(l), err: (l: string) => lines.push(`ERR ${l}`) } };
}

describe('the Python hello plugin (server.py, standard library only)', () => {
  let proc: ChildProcess;
  let url: string;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'plugflow-hello-'));
    writeFileSync(join(dir, 'token'), `${TOKEN}\n`);
    // Start it the way the agent pod will: the built ConfigMap's command and args.
    const cm = parse(readFileSync(join(ROOT, 'examples/plugins/hello/hello-executor-plugin-configmap.yaml'), 'utf8'));
    const entry = parsePluginConfigMap({ ...cm, metadata: { ...cm.metadata, namespace: 'plugflow' } });
    expect(entry.container.args![0]).toBe(readFileSync(join(ROOT, 'examples/plugins/hello/server.py'), 'utf8'));
    const port = await freePort();
    const [cmd, ...cmdArgs] = entry.container.command!;
    proc = spawn(cmd!, [...cmdArgs, ...entry.container.args!], {
      env: { ...process.env, PLUGIN_PORT: String(port), PLUGIN_TOKEN_PATH: join(dir, 'token') },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    await new Promise<void>((ok, fail) => {
      let out = '';
      proc.stdout!.on('data', (c) => {
        out += c;
        if (out.includes('listening')) ok();
      });
      proc.stderr!.on('data', (c) => (out += c));
      proc.once('exit', (code) => fail(new Error(`server.py exited ${code}: ${out}`)));
    });
    url = `http://127.0.0.1:${port}`;
  });

  afterAll(() => {
    proc?.kill();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers its own template with a message and an output parameter', async () => {
    const reports = await runThrough(url, TOKEN, { name: 'greet', plugin: { hello: { name: 'Ada' } } });
    expect(reports).toEqual([
      { phase: 'Succeeded', message: 'Hello, Ada!', outputs: { parameters: [{ name: 'greeting', value: 'Hello, Ada!' }] } },
    ]);
  });

  it("declines another plugin's template with {}", async () => {
    const reports = await runThrough(url, TOKEN, { name: 'x', plugin: { other: {} } });
    expect(reports).toEqual([{ phase: 'Failed', message: 'no plugin executed the template' }]);
  });

  it('refuses a wrong token with 403 and no body', async () => {
    const reports = await runThrough(url, 'wrong-token', { name: 'greet', plugin: { hello: {} } });
    expect(reports).toEqual([{ phase: 'Failed', message: '403: Forbidden (plugin hello sent no body)' }]);
  });

  it('passes `plugflow plugin check`', async () => {
    const { lines, p } = printer();
    const code = await runPluginCheck(url, { token: TOKEN, plugin: 'hello', config: '{"name":"check"}' }, p);
    expect(lines.filter((l) => l.startsWith('FAIL'))).toEqual([]);
    expect(lines.filter((l) => l.startsWith('PASS'))).toHaveLength(5);
    expect(lines.join('\n')).toContain('message "Hello, check!"');
    expect(lines.at(-1)).toBe('all 5 checks passed');
    expect(code).toBe(0);
  });

  it('`plugflow plugin check` fails when given the wrong plugin name or token', async () => {
    const { lines, p } = printer();
    expect(await runPluginCheck(url, { token: TOKEN, plugin: 'nothello' }, p)).toBe(1);
    expect(lines.find((l) => l.startsWith('FAIL'))).toMatch(/its own template \(plugin.nothello\) → 200 with a node: no node in \{\}/);
    const second = printer();
    expect(await runPluginCheck(url, { token: 'bad', plugin: 'hello' }, second.p)).toBe(1);
    expect(second.lines.some((l) => l.startsWith('FAIL') && l.includes('got 403'))).toBe(true);
  });
});

describe('the TypeScript progress plugin (SDK, requeue)', () => {
  let dir: string;
  let plugin: Awaited<ReturnType<typeof startProgressPlugin>>;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'plugflow-progress-'));
    writeFileSync(join(dir, 'token'), TOKEN);
    plugin = await startProgressPlugin({ port: 0, tokenPath: join(dir, 'token') });
  });

  afterAll(async () => {
    await plugin?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('reports 1/3, 2/3 while requeueing, then Succeeded 3/3 with its output', async () => {
    const reports = await runThrough(plugin.url, TOKEN, { name: 'job', plugin: { progress: { steps: 3, every: '20ms' } } }, [
      'hello',
      'progress',
    ]);
    expect(reports).toEqual([
      { phase: 'Running', message: 'step 1 of 3 done', progress: '1/3' },
      { phase: 'Running', message: 'step 2 of 3 done', progress: '2/3' },
      { phase: 'Succeeded', message: 'all 3 steps done', progress: '3/3', outputs: { parameters: [{ name: 'steps', value: '3' }] } },
    ]);
    expect(plugin.jobs.size).toBe(0);
  });

  it('passes `plugflow plugin check`', async () => {
    const { lines, p } = printer();
    expect(await runPluginCheck(plugin.url, { token: TOKEN, plugin: 'progress', config: '{"steps":2}' }, p)).toBe(0);
    expect(lines.join('\n')).toContain('phase Running, message "step 1 of 2 done", progress "1/2", requeue 1s');
  });
});
