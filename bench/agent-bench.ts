/**
 * The agent's added latency per plugin call: a task run through the agent's whole path (request
 * body serialisation, call state machine, worker pool, undici client, reply classification,
 * report) versus a bare HTTP round trip with the same client library to the same instant plugin
 * on loopback. Both alternate call by call so machine noise hits both equally.
 *
 * Run: npx tsx bench/agent-bench.ts
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';
import { PluginClient } from '../src/agent/plugin-client.js';
import { runTask } from '../src/agent/task-runner.js';
import { WorkerPool } from '../src/agent/worker-pool.js';
import type { Template } from '../src/api/index.js';
import { createLogger } from '../src/log/logger.js';
import { printFigures, type Figure } from './figures.js';

const TOKEN = 'bench-token';
const REPLY = JSON.stringify({ node: { phase: 'Succeeded', message: 'ok', outputs: { parameters: [{ name: 'x', value: '1' }] } } });

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

export async function runAgentBench(iterations = 5000): Promise<Figure[]> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.headers.authorization !== `Bearer ${TOKEN}`) {
        res.writeHead(403, { 'content-length': '0' });
        return res.end();
      }
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(REPLY) });
      res.end(REPLY);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const address = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const template: Template = {
    name: 'bench',
    inputs: { parameters: [{ name: 'a', value: '1' }] },
    plugin: { bench: { message: 'hello', items: [1, 2, 3] } },
  };
  const body = JSON.stringify({ workflow: { metadata: { name: 'wf', namespace: 'ns', uid: 'u' } }, template });

  const bare = new Pool(address, { connections: 1 });
  const bareCall = async () => {
    const res = await bare.request({
      path: '/api/v1/template.execute',
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}`, 'content-length': String(Buffer.byteLength(body)) },
      body,
    });
    await res.body.text();
  };

  const client = new PluginClient([{ name: 'bench', address, token: TOKEN }], { connections: 1 });
  const deps = {
    workflow: { name: 'wf', namespace: 'ns', uid: 'u' },
    plugins: ['bench'],
    callPlugin: (p: string, b: string) => client.execute(p, b),
    runHttp: async () => ({ phase: 'Failed' as const }),
    notImplemented: new Set<string>(),
    pool: new WorkerPool(16),
    report: () => {},
    log: createLogger('bench', 'error'),
  };
  const signal = new AbortController().signal;
  const agentCall = () => runTask('n', template, deps, signal);

  // Warm up both paths (JIT, connections).
  for (let i = 0; i < 500; i++) {
    await bareCall();
    await agentCall();
  }
  const bareTimes: number[] = [];
  const agentTimes: number[] = [];
  for (let i = 0; i < iterations; i++) {
    let t = performance.now();
    await bareCall();
    bareTimes.push(performance.now() - t);
    t = performance.now();
    await agentCall();
    agentTimes.push(performance.now() - t);
  }
  await bare.close();
  await client.close();
  await new Promise((r) => server.close(r));

  bareTimes.sort((a, b) => a - b);
  agentTimes.sort((a, b) => a - b);
  const med = (xs: number[]) => percentile(xs, 50);
  const added = med(agentTimes) - med(bareTimes);
  const added99 = percentile(agentTimes, 99) - percentile(bareTimes, 99);
  const round = (x: number) => Number(x.toFixed(3));
  return [
    {
      name: 'agent added latency per plugin call (median)',
      value: round(added),
      unit: 'ms',
      goal: '< 1 ms',
      met: added < 1,
      note: `agent ${round(med(agentTimes))} ms vs bare round trip ${round(med(bareTimes))} ms, ${iterations} calls each, loopback, instant plugin`,
    },
    {
      name: 'agent added latency per plugin call (p99)',
      value: round(added99),
      unit: 'ms',
      goal: '< 1 ms',
      met: added99 < 1,
      note: `agent p99 ${round(percentile(agentTimes, 99))} ms vs bare p99 ${round(percentile(bareTimes, 99))} ms`,
    },
  ];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  printFigures('agent', await runAgentBench());
}
