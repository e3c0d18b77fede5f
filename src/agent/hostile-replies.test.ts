/**
 * Hostile plugin replies, end to end as the agent wires them (src/agent/agent.ts): a real HTTP
 * plugin on a loopback socket → PluginClient → runTask → StatusBatcher, and the merge patch the
 * agent would send for the TaskSet status checked against the WorkflowTaskSet CRD's schema
 * (what the API server would refuse, the agent must never write).
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Template } from '../api/index.js';
import { crdDefinitions } from '../api/crd/definitions.js';
import { OfflineValidator } from '../api/crd/offline-validator.js';
import { createLogger } from '../log/logger.js';
import { PluginClient } from './plugin-client.js';
import { MAX_MESSAGE_LENGTH } from './reply-validation.js';
import { StatusBatcher, type NodeWire } from './status-batcher.js';
import { runTask } from './task-runner.js';
import { WorkerPool } from './worker-pool.js';

type Reply = (res: ServerResponse) => void;

const replies = new Map<string, Reply>();
const calls = new Map<string, number>();
let server: Server;
let address = '';
const sockets = new Set<Socket>();

const body =
  (status: number, text: string | Buffer, headers: Record<string, string> = { 'content-type': 'application/json' }): Reply =>
  (res) => {
    res.writeHead(status, { ...headers, 'content-length': Buffer.byteLength(text) });
    res.end(text);
  };
const json = (value: unknown): Reply => body(200, JSON.stringify(value));

beforeAll(async () => {
  // One plugin; what it answers depends on the task (the template name says which reply).
  server = createServer((req, res) => {
    let text = '';
    req.on('data', (c) => (text += c));
    req.on('end', () => {
      const name = (JSON.parse(text) as { template: Template }).template.name;
      calls.set(name, (calls.get(name) ?? 0) + 1);
      replies.get(name)!(res);
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  address = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  for (const s of sockets) s.destroy();
  await new Promise((r) => server.close(r));
});

const taskSetCrd = crdDefinitions().find((c) => c.spec.names.kind === 'WorkflowTaskSet')!;
const validator = new OfflineValidator(taskSetCrd);

/** Runs one task against `reply` and returns what the agent writes for it in the TaskSet status. */
async function written(name: string, reply: Reply, signal = new AbortController().signal): Promise<NodeWire> {
  replies.set(name, reply);
  const client = new PluginClient([{ name: 'hello', address, token: 't' }], { timeoutMs: 5000 });
  const patches: Array<{ status: { nodes: Record<string, NodeWire> } }> = [];
  const batcher = new StatusBatcher(async (p) => void patches.push(JSON.parse(JSON.stringify(p))), { delayMs: 1 });
  try {
    await runTask(
      'n1',
      { name, plugin: { hello: {} } },
      {
        workflow: { name: 'wf', namespace: 'ns', uid: 'u' },
        plugins: ['hello'],
        callPlugin: (p, b) => client.execute(p, b),
        runHttp: async () => ({ phase: 'Failed', message: 'not used here' }),
        notImplemented: new Set(),
        pool: new WorkerPool(2),
        report: (id, r) => batcher.set(id, r),
        log: createLogger('test', 'error'),
        retry: { attempts: 2, baseDelayMs: 5, jitter: 0 },
      },
      signal,
    );
    await batcher.flush();
  } finally {
    batcher.stop();
    await client.close();
  }
  expect(patches.length).toBeGreaterThan(0);
  // The stored object after each merge patch is what the API server validates.
  let stored: unknown = { apiVersion: 'plugflow.io/v1alpha1', kind: 'WorkflowTaskSet', metadata: { name: 'wf' }, spec: {} };
  for (const p of patches) {
    stored = mergePatch(stored, p);
    expect(validator.check(stored), 'the API server would refuse this patch').toEqual([]);
  }
  return patches.at(-1)!.status.nodes.n1!;
}

/** RFC 7386 JSON merge patch: null removes, objects merge, anything else replaces. */
function mergePatch(target: unknown, patch: unknown): unknown {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return patch;
  const out: Record<string, unknown> =
    target !== null && typeof target === 'object' && !Array.isArray(target) ? { ...(target as Record<string, unknown>) } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

const failedWith = (message: string): NodeWire => ({ phase: 'Failed', message, outputs: null, progress: null });

describe('hostile plugin replies: what the agent writes into the TaskSet status', () => {
  it.each([
    ['a list', []],
    ['number 5', 5],
    ['"str"', 'str'],
  ])('outputs that are %s → Failed naming the problem', async (got, outputs) => {
    expect(await written(`outputs-${typeof outputs}`, json({ node: { phase: 'Succeeded', outputs } }))).toEqual(
      failedWith(`plugin hello replied with an invalid result: node.outputs must be an object, got ${got}`),
    );
  });

  it('parameters of the wrong shape → Failed naming each one', async () => {
    const w = await written(
      'params',
      json({ node: { phase: 'Succeeded', outputs: { parameters: [{ name: 5, value: {} }, { value: 'x' }] } } }),
    );
    expect(w).toEqual(
      failedWith(
        'plugin hello replied with an invalid result: node.outputs.parameters[0].name must be a string, got number 5; ' +
          'node.outputs.parameters[0].value must be a string, number or boolean, got an object; node.outputs.parameters[1].name is required',
      ),
    );
  });

  it('phase, progress and requeue that break the contract', async () => {
    expect((await written('phase', json({ node: { phase: 'succeeded' } }))).message).toBe(
      'plugin hello replied with an invalid result: node.phase must be one of Pending, Running, Succeeded, Failed, Error, got "succeeded"',
    );
    expect((await written('progress', json({ node: { phase: 'Running', progress: { n: 1 } }, requeue: '1s' }))).message).toMatch(
      /^plugin hello replied with an invalid result: node\.progress must be done\/total .* got an object$/,
    );
    expect((await written('requeue', json({ node: { phase: 'Running' }, requeue: [] }))).message).toBe(
      'plugin hello replied with an invalid requeue: must be a duration string such as 30s, got a list',
    );
    expect((await written('node', json({ node: [{ phase: 'Succeeded' }] }))).message).toBe(
      'plugin hello replied with an invalid result: node must be an object, got a list',
    );
  });

  it('a 3 MiB message (a body over the 1 MiB reply limit) → Failed naming the limit', async () => {
    expect(await written('huge', json({ node: { phase: 'Failed', message: 'm'.repeat(3 * 1024 * 1024) } }))).toEqual(
      failedWith('plugin hello replied with a body over the 1 MiB limit of a plugin reply'),
    );
  });

  it('a body over the limit without a Content-Length is cut off the same way', async () => {
    const chunked: Reply = (res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"node":{"phase":"Succeeded","message":"');
      for (let i = 0; i < 12; i++) res.write('x'.repeat(100 * 1024));
      res.end('"}}');
    };
    expect(await written('chunked', chunked)).toEqual(
      failedWith('plugin hello replied with a body over the 1 MiB limit of a plugin reply'),
    );
  });

  it('a long message under the body limit is truncated with a visible marker', async () => {
    const w = await written(
      'long',
      json({ node: { phase: 'Succeeded', message: 'w'.repeat(900_000), outputs: { parameters: [{ name: 'p', value: 1 }] } } }),
    );
    expect(w.phase).toBe('Succeeded');
    expect(w.message!.length).toBeLessThanOrEqual(MAX_MESSAGE_LENGTH);
    expect(w.message).toMatch(/^w+… \[message truncated: 900000 characters in all\]$/);
    expect(w.outputs).toEqual({ parameters: [{ name: 'p', value: '1' }] });
  });

  it('10,000 output parameters (outputs over 128 KiB) → Failed naming the limit', async () => {
    const parameters = Array.from({ length: 10_000 }, (_, i) => ({ name: `p${i}`, value: String(i) }));
    const w = await written('many', json({ node: { phase: 'Succeeded', outputs: { parameters } } }));
    expect(w.phase).toBe('Failed');
    expect(w.message).toMatch(
      /^plugin hello replied with an invalid result: node\.outputs is \d+ bytes as JSON, over the 128 KiB limit of a task result/,
    );
  });

  it('deeply nested outputs never reach the status', async () => {
    const deep = `{"node":{"phase":"Succeeded","outputs":{"artifacts":[{"name":"a","raw":${'{"a":'.repeat(1000)}1${'}'.repeat(1000)}}]}}}`;
    const w = await written('deep', body(200, deep));
    expect(w).toEqual(
      failedWith('plugin hello replied with an invalid result: node.outputs.artifacts[0] is nested more than 32 levels deep'),
    );
  });

  it('Failed without a message, or with an empty or tiny one, still says what happened', async () => {
    expect(await written('nomsg', json({ node: { phase: 'Failed' } }))).toEqual(
      failedWith('plugin hello reported Failed without a message'),
    );
    expect(await written('empty', json({ node: { phase: 'Failed', message: '' } }))).toEqual(
      failedWith('plugin hello reported Failed without a message'),
    );
    expect(await written('nullmsg', json({ node: { phase: 'Error', message: null } }))).toEqual({
      ...failedWith('plugin hello reported Error without a message'),
      phase: 'Error',
    });
    expect(await written('tiny', json({ node: { phase: 'Failed', message: 'x' } }))).toEqual(failedWith('plugin hello reported Failed: x'));
  });

  it('a status other than 200 with no body names the status', async () => {
    expect(await written('204', body(204, ''))).toEqual(failedWith('204: No Content (plugin hello sent no body)'));
    expect(await written('403', body(403, ''))).toEqual(failedWith('403: Forbidden (plugin hello sent no body)'));
    expect(await written('599', body(599, '  '))).toEqual(failedWith('599: (plugin hello sent no body)'));
  });

  it('a connection dropped before any reply, every time → Failed naming the cause', async () => {
    const w = await written('drop', (res) => res.socket?.destroy());
    expect(w.phase).toBe('Failed');
    expect(w.message).toMatch(/^plugin hello failed 2 times: .{8,}/);
  });

  it('a valid reply keeps only the fields of the contract', async () => {
    const w = await written(
      'valid',
      json({ node: { phase: 'Succeeded', message: 'ok', progress: '2/2', outputs: { result: 'r', junk: 1 }, extra: true }, requeue: '1h' }),
    );
    expect(w).toEqual({ phase: 'Succeeded', message: 'ok', outputs: { result: 'r' }, progress: '2/2' });
  });

  it('a requeue longer than a timer can hold (1000h) waits quietly instead of spinning', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    process.on('warning', onWarning);
    const abort = new AbortController();
    setTimeout(() => abort.abort(), 200);
    try {
      const w = await written(
        'longwait',
        json({ node: { phase: 'Running', message: 'working on it', progress: '1/4' }, requeue: '1000h' }),
        abort.signal,
      );
      expect(w).toEqual({ phase: 'Running', message: 'working on it', outputs: null, progress: '1/4' });
    } finally {
      process.off('warning', onWarning);
    }
    expect(calls.get('longwait')).toBe(1);
    expect(warnings).not.toContain('TimeoutOverflowWarning');
  });
});
