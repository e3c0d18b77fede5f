/**
 * The event queue under pressure, against the real API server, with `--event-dispatch=async`
 * (200 as soon as the event is queued, so the queue itself is what is seen): with one held
 * worker and a small queue exactly the overflow gets 503 (with Retry-After) and every accepted
 * event is dispatched; a shutdown refuses new events, reports not-ready, and dispatches
 * everything it accepted; an event accepted while the API server cannot be reached is
 * dispatched, once, when it is back — and in the default sync mode, the answer waits for it.
 */
import { KubeConfig } from '@kubernetes/client-node';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LABEL_WORKFLOW_EVENT_BINDING } from '../src/api/index.js';
import { cluster, createTestNamespace, deleteTestNamespace } from './support/cluster.js';
import { call, createObject, eventually, grantRole, listWorkflows, rule, serverKubeConfig, startTestServer } from './support/server.js';

/**
 * A TCP relay in front of the real API server that can cut the line: while cut, it closes every
 * open connection and hangs up on new ones (what a restarting API server looks like to a client).
 */
async function relay(target: URL): Promise<{ url: string; cut(): void; restore(): void; close(): Promise<void> }> {
  let down = false;
  const open = new Set<Socket>();
  const server: Server = createServer((client) => {
    if (down) return void client.destroy();
    const upstream = connect(Number(target.port), target.hostname);
    for (const s of [client, upstream]) {
      open.add(s);
      s.on('close', () => open.delete(s));
      s.on('error', () => {});
    }
    client.pipe(upstream).pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  return {
    url: `https://127.0.0.1:${port}`,
    cut: () => {
      down = true;
      for (const s of open) s.destroy();
    },
    restore: () => (down = false),
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** A gate the test opens; held workers wait on it before each event. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  return { wait: () => opened, open };
}

describe('event queue', () => {
  let ns: string;
  let alice: string;

  beforeAll(async () => {
    ns = await createTestNamespace('evqueue');
    alice = cluster().userTokens.alice;
    await grantRole(ns, 'alice', 'event-sender', [
      rule('workfloweventbindings', 'list'),
      rule('workflowtemplates', 'get'),
      rule('workflows', 'create'),
    ]);
    await createObject(ns, 'workflowtemplates', {
      kind: 'WorkflowTemplate',
      metadata: { name: 'tick' },
      spec: {
        entrypoint: 'main',
        arguments: { parameters: [{ name: 'n' }] },
        templates: [{ name: 'main', container: { image: 'busybox', command: ['true'] } }],
      },
    });
    for (const test of ['overflow', 'drain']) {
      await createObject(ns, 'workfloweventbindings', {
        kind: 'WorkflowEventBinding',
        metadata: { name: test },
        spec: {
          event: { selector: `payload.test == "${test}"` },
          submit: { workflowTemplateRef: { name: 'tick' }, arguments: { parameters: [{ name: 'n', valueFrom: { event: 'payload.n' } }] } },
        },
      });
    }
  });

  afterAll(async () => {
    await deleteTestNamespace(ns);
  });

  const send = (url: string, body: unknown) => call('POST', `${url}/api/v1/events/${ns}/`, { token: alice, body });
  const numbers = async (binding: string) =>
    (await listWorkflows(ns, `${LABEL_WORKFLOW_EVENT_BINDING}=${binding}`))
      .map((w) => Number(w.spec.arguments.parameters[0].value))
      .sort((a, b) => a - b);

  it('with one slow worker and a queue of 3, exactly the overflow gets 503 and every accepted event is dispatched', async () => {
    const g = gate();
    const srv = await startTestServer({
      namespace: ns,
      secure: false,
      eventDispatch: 'async',
      eventOperationQueueSize: 3,
      eventWorkerCount: 1,
      dispatchGate: g.wait,
    });
    try {
      await eventually(async () => srv.bindings(ns).length === 2, 'bindings in the cache');
      const replies = [];
      for (let n = 1; n <= 8; n++) replies.push(await send(srv.url, { test: 'overflow', n }));
      expect(replies.map((r) => r.status)).toEqual([200, 200, 200, 503, 503, 503, 503, 503]);
      for (const r of replies.slice(3)) {
        expect(r.headers['retry-after']).toBe('1');
        expect(r.body).toEqual({ code: 14, message: expect.stringContaining('event queue is full') });
      }
      // All at once: the queue is still full, so every one of them is refused.
      const burst = await Promise.all([9, 10, 11, 12].map((n) => send(srv.url, { test: 'overflow', n })));
      expect(burst.map((r) => r.status)).toEqual([503, 503, 503, 503]);
      g.open();
      await eventually(async () => srv.eventsInProcess() === 0, 'the queue to empty');
      expect(await numbers('overflow')).toEqual([1, 2, 3]);
      const metrics = (await call('GET', srv.metricsUrl)).text;
      expect(metrics).toContain('plugflow_events_received_total{result="accepted"} 3');
      expect(metrics).toContain('plugflow_events_received_total{result="queue_full"} 9');
      expect(metrics).toContain('plugflow_events_dispatched_total 3');
      // Room again: the next event is taken.
      expect((await send(srv.url, { test: 'overflow', n: 13 })).status).toBe(200);
      await eventually(async () => srv.eventsInProcess() === 0, 'the queue to empty');
      expect(await numbers('overflow')).toEqual([1, 2, 3, 13]);
    } finally {
      g.open();
      await srv.close();
    }
  });

  it('shutdown refuses new events, reports not ready, and dispatches every accepted event before closing', async () => {
    const g = gate();
    const srv = await startTestServer({
      namespace: ns,
      secure: false,
      eventDispatch: 'async',
      eventOperationQueueSize: 10,
      eventWorkerCount: 2,
      dispatchGate: g.wait,
    });
    await eventually(async () => srv.bindings(ns).length === 2, 'bindings in the cache');
    for (let n = 1; n <= 6; n++) expect((await send(srv.url, { test: 'drain', n })).status).toBe(200);
    expect(srv.eventsInProcess()).toBe(6);
    let closed = false;
    const closing = srv.close().then(() => (closed = true));
    const late = await send(srv.url, { test: 'drain', n: 7 });
    expect(late.status).toBe(503);
    expect(late.body.message).toMatch(/shutting down/);
    const ready = await call('GET', `${srv.url}/readyz`);
    expect(ready.status).toBe(503);
    expect(ready.body.reason).toBe('shutting down');
    expect(closed).toBe(false);
    g.open();
    await closing;
    expect(await numbers('drain')).toEqual([1, 2, 3, 4, 5, 6]);
    await expect(send(srv.url, { test: 'drain', n: 8 })).rejects.toThrow();
  });

  it('an event accepted while the API server cannot be reached is dispatched, once, when it is back', async () => {
    await createObject(ns, 'workfloweventbindings', {
      kind: 'WorkflowEventBinding',
      metadata: { name: 'outage' },
      spec: {
        event: { selector: 'payload.test == "outage"' },
        submit: { workflowTemplateRef: { name: 'tick' }, arguments: { parameters: [{ name: 'n', valueFrom: { event: 'payload.n' } }] } },
      },
    });
    const direct = await serverKubeConfig();
    const line = await relay(new URL(direct.getCurrentCluster()!.server));
    const kc = new KubeConfig();
    kc.loadFromString(direct.exportConfig());
    kc.clusters = kc.clusters.map((c) => ({ ...c, server: line.url }));
    const srv = await startTestServer({ namespace: ns, secure: false, kubeConfig: kc, eventDispatch: 'async' });
    try {
      await eventually(async () => srv.bindings(ns).some((b) => b.name === 'outage'), 'the binding in the cache');
      // One event on a good line first: the caller's token review is then cached.
      expect((await send(srv.url, { test: 'outage', n: 0 })).status).toBe(200);
      await eventually(async () => (await numbers('outage')).length === 1, 'the first event dispatched');
      line.cut();
      expect((await send(srv.url, { test: 'outage', n: 1 })).status).toBe(200);
      await eventually(
        async () => srv.logs.some((l) => l.includes('API server unavailable while dispatching an event; retrying')),
        'a retry logged',
      );
      expect(await numbers('outage')).toEqual([0]);
      line.restore();
      await eventually(async () => srv.eventsInProcess() === 0, 'the event dispatched', 30_000);
      expect(await numbers('outage')).toEqual([0, 1]);
      expect(srv.logs.filter((l) => l.includes('event binding failed'))).toEqual([]);
    } finally {
      line.restore();
      await srv.close();
      await line.close();
    }
  });

  it('in the default sync mode, an event sent while the API server is briefly unreachable is answered 200 once its workflow exists', async () => {
    const direct = await serverKubeConfig();
    const line = await relay(new URL(direct.getCurrentCluster()!.server));
    const kc = new KubeConfig();
    kc.loadFromString(direct.exportConfig());
    kc.clusters = kc.clusters.map((c) => ({ ...c, server: line.url }));
    const srv = await startTestServer({ namespace: ns, secure: false, kubeConfig: kc });
    try {
      await eventually(async () => srv.bindings(ns).some((b) => b.name === 'outage'), 'the binding in the cache');
      expect((await send(srv.url, { test: 'outage', n: 10 })).status).toBe(200);
      line.cut();
      const answer = send(srv.url, { test: 'outage', n: 11 });
      await eventually(
        async () => srv.logs.some((l) => l.includes('API server unavailable while dispatching an event; retrying')),
        'a retry logged',
      );
      line.restore();
      const reply = await answer;
      expect(reply.status).toBe(200);
      expect(await numbers('outage')).toEqual([0, 1, 10, 11]);
      const made = (await listWorkflows(ns, `${LABEL_WORKFLOW_EVENT_BINDING}=outage`)).filter(
        (w) => w.spec.arguments.parameters[0].value === '11',
      );
      expect(reply.body.workflows).toEqual([{ binding: 'outage', name: made[0].metadata.name }]);
    } finally {
      line.restore();
      await srv.close();
      await line.close();
    }
  });
});
