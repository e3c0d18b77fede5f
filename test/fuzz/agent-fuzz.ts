/**
 * Fuzz of the agent's side of the plugin protocol: a hostile plugin on loopback answers each
 * call with a generated reply — wrong types, huge bodies and messages, deep nesting, bad
 * requeues, odd statuses, a body that trickles in, a connection dropped mid-body, a reply that
 * never comes — and the agent's real code path (PluginClient → call state machine → runTask,
 * as src/agent/agent.ts wires them) runs tasks against it.
 *
 * For every task: runTask must end (or stop when aborted) without throwing; every result it
 * reports must be a NodeResult the API server would store in the TaskSet status (checked with
 * the CRD's schema: one it refuses would stall the agent's status patches), with a bounded
 * message that names the problem when it failed; a task that ended must have reported. No
 * unhandled rejection may happen meanwhile.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { NodeResult, Template } from '../../src/api/index.js';
import { crdDefinitions } from '../../src/api/crd/definitions.js';
import { OfflineValidator } from '../../src/api/crd/offline-validator.js';
import { PluginClient } from '../../src/agent/plugin-client.js';
import { runTask } from '../../src/agent/task-runner.js';
import { WorkerPool } from '../../src/agent/worker-pool.js';
import { createLogger } from '../../src/log/logger.js';
import type { Prng } from '../soak/prng.js';
import { deepJson, hostileString, jsonValue, short } from './generators.js';
import type { Tally } from './tally.js';

const TOKEN = 'fuzz-token';
const TARGET = 'agent: hostile plugin replies';

interface Reply {
  label: string;
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  mode: 'normal' | 'trickle' | 'drop-mid-body' | 'never' | 'short-body';
}

const j = (v: unknown) => Buffer.from(JSON.stringify(v));

function hostileReply(rng: Prng): Reply {
  const ok = (label: string, body: Buffer, mode: Reply['mode'] = 'normal'): Reply => ({
    label,
    status: 200,
    headers: { 'content-type': 'application/json' },
    body,
    mode,
  });
  switch (rng.int(0, 19)) {
    case 0:
      return ok('node of the wrong type', j({ node: rng.pick<unknown>(['x', 5, true, [], [{ phase: 'Succeeded' }]]) }));
    case 1:
      return ok(
        'phase of the wrong type or value',
        j({ node: { phase: rng.pick<unknown>([5, null, '', 'Bogus', 'succeeded', ['Succeeded'], { a: 1 }]) } }),
      );
    case 2:
      return ok(
        'outputs of the wrong type',
        j({
          node: {
            phase: 'Succeeded',
            outputs: rng.pick<unknown>([
              'str',
              5,
              [],
              { parameters: 'x' },
              { parameters: [{ name: 5, value: {} }] },
              { parameters: [{ value: 'no name' }] },
              { result: { a: 1 } },
              { exitCode: [] },
            ]),
          },
        }),
      );
    case 3:
      return ok(
        'message/progress of the wrong type',
        j({
          node: { phase: rng.pick(['Succeeded', 'Failed', 'Running']), message: jsonValue(rng, 2), progress: jsonValue(rng, 1) },
          requeue: rng.chance(0.5) ? '10ms' : undefined,
        }),
      );
    case 4:
      return ok(
        'bad requeue',
        j({
          node: { phase: rng.pick(['Running', 'Pending']) },
          requeue: rng.pick<unknown>([5, 'banana', '-5s', '1y', '100000000h', '', '0s', '1ms', [], { s: 1 }, '1e9s', '٣s']),
        }),
      );
    case 5: {
      const size = rng.pick([3 * 1024 * 1024, 5 * 1024 * 1024, 12 * 1024 * 1024]);
      return ok(`huge message (${size} bytes)`, j({ node: { phase: 'Failed', message: 'm'.repeat(size) } }));
    }
    case 6: {
      const n = rng.pick([10_000, 100_000]);
      return ok(
        `${n} output parameters`,
        j({
          node: { phase: 'Succeeded', outputs: { parameters: Array.from({ length: n }, (_, i) => ({ name: `p${i}`, value: String(i) })) } },
        }),
      );
    }
    case 7:
      return ok('deep nesting', Buffer.from(`{"node":{"phase":"Succeeded","outputs":${deepJson(rng.pick([1000, 100_000]), 'object')}}}`));
    case 8:
      return ok(
        'not JSON',
        Buffer.from(
          rng.pick(['<html>oops</html>', '{"node":', 'nul', '\u0000\u0001', "{'node':{}}", '{"node":{"phase":"Succeeded"}}{"x":1}']),
        ),
      );
    case 9:
      return ok(
        'JSON that is not an object',
        Buffer.from(rng.pick(['[]', '"Succeeded"', '42', 'true', '[{"node":{"phase":"Succeeded"}}]'])),
      );
    case 10:
      return ok(
        'empty or odd bodies',
        Buffer.from(rng.pick(['', ' ', '{}', 'null', '{"node":null}', '{"node":{}}', '\ufeff{"node":{"phase":"Succeeded"}}'])),
      );
    case 11:
      return {
        label: 'UTF-16 body',
        status: 200,
        headers: { 'content-type': 'application/json; charset=utf-16' },
        body: Buffer.from('\ufeff{"node":{"phase":"Succeeded"}}', 'utf16le'),
        mode: 'normal',
      };
    case 12: {
      const status = rng.pick([201, 204, 301, 302, 400, 401, 403, 405, 413, 418, 429, 500, 502, 504]);
      return {
        label: `status ${status}`,
        status,
        headers: status === 301 || status === 302 ? { location: 'http://127.0.0.1:1/' } : { 'content-type': 'text/html' },
        body: status === 204 ? Buffer.alloc(0) : Buffer.from(`<h1>${status}</h1>${hostileString(rng).slice(0, 5000)}`),
        mode: 'normal',
      };
    }
    case 13:
      return {
        label: 'slow trickle',
        status: 200,
        headers: { 'content-type': 'application/json' },
        body: j({ node: { phase: 'Succeeded', message: 'slow' } }),
        mode: 'trickle',
      };
    case 14:
      return {
        label: 'connection dropped mid-body',
        status: 200,
        headers: { 'content-type': 'application/json', 'content-length': '500' },
        body: Buffer.from('{"node":{"phase":"Succ'),
        mode: 'drop-mid-body',
      };
    case 15:
      return { label: 'no reply at all', status: 200, headers: {}, body: Buffer.alloc(0), mode: 'never' };
    case 16:
      return {
        label: 'Content-Length shorter than the body',
        status: 200,
        headers: { 'content-type': 'application/json' },
        body: j({ node: { phase: 'Succeeded' } }),
        mode: 'short-body',
      };
    case 17:
      return ok(
        'hostile strings in a valid reply',
        j({
          node: {
            phase: 'Succeeded',
            message: hostileString(rng),
            outputs: { result: hostileString(rng), parameters: [{ name: hostileString(rng).slice(0, 300), value: hostileString(rng) }] },
            progress: hostileString(rng).slice(0, 300),
          },
        }),
      );
    case 18:
      return { label: '503 (transient)', status: 503, headers: {}, body: Buffer.from('busy'), mode: 'normal' };
    default:
      return ok('valid', j({ node: { phase: 'Succeeded', message: 'ok', outputs: { parameters: [{ name: 'x', value: '1' }] } } }));
  }
}

async function hostilePlugin(replyFor: (call: number, uid: string) => Reply): Promise<{ server: Server; url: string }> {
  let calls = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let uid = '';
      try {
        uid =
          (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { workflow?: { metadata?: { uid?: string } } }).workflow?.metadata?.uid ??
          '';
      } catch {
        // the agent always sends JSON; an empty uid only loses the label in a failure line
      }
      const r = replyFor(calls++, uid);
      if (r.mode === 'never') return; // the client's timeout must end this
      if (r.mode === 'drop-mid-body') {
        res.writeHead(r.status, r.headers);
        res.write(r.body);
        setTimeout(() => res.socket?.destroy(), 20);
        return;
      }
      if (r.mode === 'short-body') {
        res.socket?.end(
          Buffer.concat([
            Buffer.from(`HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 5\r\nConnection: close\r\n\r\n`),
            r.body,
          ]),
        );
        return;
      }
      res.writeHead(r.status, { ...r.headers, ...(r.mode === 'trickle' ? {} : { 'content-length': String(r.body.length) }) });
      if (r.mode !== 'trickle') return void res.end(r.body);
      let i = 0;
      const timer = setInterval(() => {
        if (i >= r.body.length || res.destroyed) {
          clearInterval(timer);
          return void res.end();
        }
        res.write(r.body.subarray(i, i + 1));
        i++;
      }, 150);
      res.on('close', () => clearInterval(timer));
    });
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

const FINAL = new Set(['Succeeded', 'Failed', 'Error']);

export async function fuzzAgent(rng: Prng, tally: Tally, tasks: number, log: (l: string) => void): Promise<void> {
  const taskSetCrd = crdDefinitions().find((c) => c.spec.names.kind === 'WorkflowTaskSet')!;
  const validator = new OfflineValidator(taskSetCrd);
  const unhandled: string[] = [];
  const onUnhandled = (err: unknown) => unhandled.push(String((err as Error)?.stack ?? err).slice(0, 300));
  process.on('unhandledRejection', onUnhandled);
  /** What each task's calls were answered, by workflow uid, for the failure lines. */
  const answered = new Map<string, string[]>();
  const plugin = await hostilePlugin((_call, uid) => {
    // One generated reply per call (a task that requeues meets a new one on each call).
    const r = hostileReply(rng);
    answered.set(uid, [...(answered.get(uid) ?? []), r.label]);
    return r;
  });
  const client = new PluginClient([{ name: 'fuzz', address: plugin.url, token: TOKEN }], { timeoutMs: 1500, connections: 8 });
  const rssBefore = process.memoryUsage().rss;
  const t = tally.of(TARGET);
  const template: Template = { name: 'fuzz', plugin: { fuzz: { a: 1 } } };
  const batch = 8;
  try {
    for (let start = 0; start < tasks; start += batch) {
      await Promise.all(
        Array.from({ length: Math.min(batch, tasks - start) }, async (_, k) => {
          const n = start + k;
          const reports: NodeResult[] = [];
          const abort = new AbortController();
          const timer = setTimeout(() => abort.abort(), 6000);
          const labels: string[] = [];
          let ended = false;
          try {
            await runTask(
              `node-${n}`,
              template,
              {
                workflow: { name: 'wf', namespace: 'ns', uid: `uid-${n}` },
                plugins: ['fuzz'],
                callPlugin: async (p, body) => {
                  const out = await client.execute(p, body);
                  labels.push(out.kind);
                  return out;
                },
                runHttp: async () => ({ phase: 'Failed', message: 'no http in this fuzz' }),
                notImplemented: new Set(),
                pool: new WorkerPool(4),
                report: (_id, r) => void reports.push(r),
                log: createLogger('agent-fuzz', 'error'),
                retry: { attempts: 2, baseDelayMs: 20, jitter: 0 },
              },
              abort.signal,
            );
            ended = !abort.signal.aborted;
          } catch (err) {
            tally.fail(TARGET, `task ${n}: runTask threw ${(err as Error)?.message ?? err}`);
          } finally {
            clearTimeout(timer);
          }
          t.tried++;
          const bad: string[] = [];
          for (const r of reports) {
            const problems = validator.check({
              apiVersion: 'plugflow.io/v1alpha1',
              kind: 'WorkflowTaskSet',
              metadata: { name: 'x' },
              status: { nodes: { n: r } },
            });
            if (problems.length)
              bad.push(
                `a result the API server would refuse (${problems
                  .map((p) => `${p.field}: ${p.detail}`)
                  .join('; ')
                  .slice(0, 200)}): ${short(r)}`,
              );
            if (typeof r.message === 'string' && r.message.length > 16_384) bad.push(`a ${r.message.length}-character message (unbounded)`);
            if ((r.phase === 'Failed' || r.phase === 'Error') && !(typeof r.message === 'string' && r.message.trim().length >= 8))
              bad.push(`${r.phase} without a message naming the problem`);
          }
          const last = reports[reports.length - 1];
          // A task ends with a result; an interim phase is final for the agent only when the plugin
          // did not ask to be called again (the contract calls again only on a requeue).
          if (ended && !last) bad.push('the task ended without reporting a result');
          if (bad.length)
            tally.fail(
              TARGET,
              `task ${n} (replies: ${(answered.get(`uid-${n}`) ?? []).join(', ')}; outcomes: ${labels.join(', ')}): ${bad.join('; ')}`,
            );
          else if (last?.phase && FINAL.has(last.phase) && last.phase === 'Succeeded') t.accepted++;
          else t.rejected++;
        }),
      );
      if ((start / batch) % 10 === 0) log(`  agent: ${Math.min(start + batch, tasks)}/${tasks} tasks`);
    }
  } finally {
    process.off('unhandledRejection', onUnhandled);
    await client.close();
    plugin.server.closeAllConnections();
    await new Promise((r) => plugin.server.close(r));
  }
  for (const u of unhandled) tally.fail(TARGET, `unhandled rejection: ${u}`);
  const grew = (process.memoryUsage().rss - rssBefore) / 2 ** 20;
  if (grew > 512) tally.fail(TARGET, `the process grew by ${grew.toFixed(0)} MiB over the agent fuzz`);
}
