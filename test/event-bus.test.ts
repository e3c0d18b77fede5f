/**
 * The event bus (`--event-bus`) against a real three-node NATS JetStream cluster and the real
 * API server: an accepted event is stored before the 200, two server replicas share the work,
 * a sender's retry is not stored twice, a JetStream node may die, an unreadable event goes to
 * the dead letters with its reason, and /readyz follows the bus.
 */
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { randomBytes } from 'node:crypto';
import { connect as netConnect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANNOTATION_EVENT_ID, LABEL_WORKFLOW_EVENT_BINDING } from '../src/api/index.js';
import { startNatsCluster, type NatsCluster } from '../src/devenv/nats-cluster.js';
import { busConnectOptions } from '../src/server/event-bus-connection.js';
import { envelopeKey } from '../src/server/event-envelope.js';
import { deleteTestNamespace } from './support/cluster.js';
import { eventNamespace } from './support/event-namespace.js';
import { call, eventually, listWorkflows, startTestServer, type TestServer } from './support/server.js';

describe('event bus: NATS JetStream', () => {
  let ns: string;
  let nats: NatsCluster;
  let alice: string;
  const key = envelopeKey(randomBytes(32));
  const servers: TestServer[] = [];
  const stream = `EVENTS_${randomBytes(3).toString('hex').toUpperCase()}`;

  const start = async () => {
    const s = await startTestServer({
      namespace: ns,
      secure: false,
      eventBus: { ...nats.connection, key, stream, ackWaitMs: 3000, retryForMs: 30_000 },
    });
    servers.push(s);
    return s;
  };
  const send = (s: TestServer, body: unknown, headers: Record<string, string> = {}) =>
    call('POST', `${s.url}/api/v1/events/${ns}/`, { token: alice, body, headers });
  const made = () => listWorkflows(ns, `${LABEL_WORKFLOW_EVENT_BINDING}=on-order`);
  const byEvent = async () => {
    const m = new Map<string, number>();
    for (const w of await made()) {
      const id = w.metadata.annotations?.[ANNOTATION_EVENT_ID] as string;
      m.set(id, (m.get(id) ?? 0) + 1);
    }
    return m;
  };

  beforeAll(async () => {
    ({ ns, alice } = await eventNamespace('event-bus', 'order'));
    nats = await startNatsCluster({ log: (l) => console.log(l) });
  });

  afterAll(async () => {
    for (const s of servers) await s.close().catch(() => {});
    await nats?.stop();
    await deleteTestNamespace(ns);
  });

  it('is closed to whoever lacks the credentials: no anonymous or wrong login, no plain connection', async () => {
    const { servers: urls, ca, credentials } = nats.connection;
    const refusal = (o: Parameters<typeof connect>[0]) =>
      connect({ ...o, reconnect: false, timeout: 5_000 }).then(
        async (nc) => (await nc.close(), 'connected'),
        (err: Error) => err.message,
      );
    expect(await refusal({ servers: urls, tls: { ca } })).toMatch(/Authorization Violation/i);
    expect(await refusal({ servers: urls, tls: { ca }, user: credentials.user, pass: 'not-the-password' })).toMatch(
      /Authorization Violation/i,
    );
    // Without TLS the node takes no CONNECT: it says TLS and a login are required and hangs up.
    const plain = await plainConnect(urls[0]!);
    expect(plain).toMatch(/^INFO .*"auth_required":true/);
    expect(plain).toMatch(/"tls_required":true/);
    expect(plain).not.toMatch(/\+OK|MSG /);
    expect(await refusal(busConnectOptions(nats.connection))).toBe('connected');
  });

  it('answers 200 once the replicated stream holds the event; its workflow follows, once, whoever dispatches', async () => {
    const [a, b] = [await start(), await start()];
    await eventually(async () => a.bindings(ns).length === 1 && b.bindings(ns).length === 1, 'the binding in both caches');
    const replies = await Promise.all(
      Array.from({ length: 40 }, (_, n) => send(n % 2 ? a : b, { kind: 'order', n }, { 'X-Event-Id': `order-${n}` })),
    );
    expect(replies.map((r) => r.status)).toEqual(Array(40).fill(200));
    expect(replies[3].body).toEqual({ id: 'order-3' });
    await eventually(async () => (await made()).length >= 40, '40 workflows', 30_000);
    const counts = await byEvent();
    expect([...counts.values()].every((c) => c === 1)).toBe(true);
    expect(counts.size).toBe(40);
    // Both replicas took events from the shared consumer.
    const acked = async (s: TestServer) =>
      (await s.metrics.busDeliveries.get()).values.find((v) => v.labels.result === 'acked')?.value ?? 0;
    expect((await acked(a)) + (await acked(b))).toBe(40);
  });

  it("a sender's retry of the same delivery is not stored twice and makes no second workflow", async () => {
    const s = servers[0];
    const first = await send(s, { kind: 'order', n: 100 }, { 'X-GitHub-Delivery': 'gh-100' });
    const again = await send(s, { kind: 'order', n: 100 }, { 'X-GitHub-Delivery': 'gh-100' });
    expect(first).toMatchObject({ status: 200, body: { id: 'gh-100' } });
    expect(again).toMatchObject({ status: 200, body: { id: 'gh-100', duplicate: true } });
    await eventually(async () => (await byEvent()).get('gh-100') === 1, 'the workflow of gh-100');
    await new Promise((r) => setTimeout(r, 500));
    expect((await byEvent()).get('gh-100')).toBe(1);
  });

  it('keeps accepting and dispatching while one JetStream node is SIGKILLed, and after it returns', async () => {
    const s = servers[0];
    await nats.kill(2);
    // While the stream elects a new leader a publish may not be confirmed within the endpoint's
    // 8 s (a 503 that says so): the sender resends the same delivery, as webhook senders do.
    const accepted = async (i: number) => {
      for (const until = Date.now() + 60_000; ;) {
        const r = await send(s, { kind: 'order', n: 200 + i }, { 'X-Event-Id': `node-down-${i}` });
        if (r.status === 200 || Date.now() > until) return r;
        expect(r.status).toBe(503);
      }
    };
    const replies = await Promise.all(Array.from({ length: 20 }, (_, i) => accepted(i)));
    expect(replies.filter((r) => r.status !== 200).map((r) => r.text)).toEqual([]);
    await nats.restart(2);
    const after = await send(s, { kind: 'order', n: 300 }, { 'X-Event-Id': 'node-back' });
    expect(after.status).toBe(200);
    await eventually(
      async () => {
        const c = await byEvent();
        return Array.from({ length: 20 }, (_, i) => c.get(`node-down-${i}`)).every((n) => n === 1) && c.get('node-back') === 1;
      },
      'the workflows of the events sent while a node was down',
      30_000,
    );
  });

  it('an event that cannot be read goes to the dead letters with its reason, and is not delivered again', async () => {
    const nc = await connect(busConnectOptions(nats.connection));
    try {
      // The stream may still be electing a leader after the node restart above: publish until it
      // takes it (the message id makes a repeat a no-op).
      await eventually(
        () =>
          jetstream(nc)
            .publish(`plugflow.events.${ns}`, new TextEncoder().encode('not an event'), { msgID: 'garbage-1' })
            .catch(() => undefined),
        'the garbage stored',
        60_000,
      );
      // Every JetStream API call is retried for a while: the streams may still be electing
      // leaders after the node restart above, and a call then times out.
      const retrying = <T>(what: string, call: () => Promise<T | false | undefined>) =>
        eventually(() => call().catch(() => undefined), what, 60_000);
      const jsm = await retrying('the JetStream API', () => jetstreamManager(nc, { timeout: 10_000 }));
      const dead = await retrying('a dead letter', async () => {
        const info = await jsm.streams.info(`${stream}_DEAD`);
        return info.state.messages > 0 && info;
      });
      expect(dead.state.messages).toBe(1);
      const letter = await retrying('the dead letter read', () =>
        jsm.streams.getMessage(`${stream}_DEAD`, { last_by_subj: `plugflow.dead-events.${ns}` }).then((m) => m ?? undefined),
      );
      // Normally the first delivery dead-letters it; while the dead-letter stream still elects a
      // leader that write may fail, and the event then stays in the work stream for one more
      // delivery (the dead letter's message id keeps it to one letter either way).
      const facts = JSON.parse(new TextDecoder().decode(letter.data));
      expect(facts).toMatchObject({ reason: 'the stored event has no facts line' });
      expect(facts.deliveries).toBeGreaterThanOrEqual(1);
      // Terminated in the work stream: nothing left to deliver.
      await retrying('the work stream to empty', async () => (await jsm.streams.info(stream)).state.messages === 0);
    } finally {
      await nc.close();
    }
  });

  it("a forged message claiming the server's own account is dead-lettered, never dispatched", async () => {
    const nc = await connect(busConnectOptions(nats.connection));
    try {
      // Someone on the bus writes an event as the envelope looks, without the replicas' key.
      const facts = { v: 2, ns, d: '', id: 'forged-own', h: [], at: Date.now(), caller: { id: 'server', hash: '', own: true } };
      const forged = `${JSON.stringify(facts)}\n${randomBytes(40).toString('base64')}\n${JSON.stringify({ kind: 'order', n: 500 })}`;
      await eventually(
        () =>
          jetstream(nc)
            .publish(`plugflow.events.${ns}`, new TextEncoder().encode(forged), { msgID: 'forged-own' })
            .catch(() => undefined),
        'the forged message stored',
        60_000,
      );
      const jsm = await eventually(() => jetstreamManager(nc, { timeout: 10_000 }).catch(() => undefined), 'the JetStream API', 60_000);
      const letter = await eventually(
        async () => {
          const m = await jsm.streams.getMessage(`${stream}_DEAD`, { last_by_subj: `plugflow.dead-events.${ns}` }).catch(() => undefined);
          const text = m ? new TextDecoder().decode(m.data) : '';
          return /forged/.test(text) && (JSON.parse(text) as { reason: string });
        },
        'the dead letter of the forged message',
        60_000,
      );
      expect(letter.reason).toMatch(/seal does not open .* forged, changed, moved to another subject, or sealed with another key/);
      await new Promise((r) => setTimeout(r, 1000));
      expect((await byEvent()).get('forged-own')).toBeUndefined();
    } finally {
      await nc.close();
    }
  });

  it('/readyz and the endpoint say when the bus is gone; nothing is answered 200 that was not stored', async () => {
    const s = servers[0];
    for (const i of [0, 1, 2]) await nats.kill(i);
    await eventually(async () => (await call('GET', `${s.url}/readyz`)).status === 503, '/readyz to fail');
    expect((await call('GET', `${s.url}/readyz`)).body.reason).toMatch(/disconnected from the event bus/);
    const refused = await send(s, { kind: 'order', n: 400 }, { 'X-Event-Id': 'bus-gone' });
    expect(refused.status).toBe(503);
    expect(refused.body.message).toMatch(/the event bus did not store the event, so it is not accepted/);
    for (const i of [0, 1, 2]) await nats.restart(i);
    await eventually(async () => (await call('GET', `${s.url}/readyz`)).status === 200, '/readyz to pass again', 60_000);
    const resent = await eventually(
      async () => {
        const r = await send(s, { kind: 'order', n: 400 }, { 'X-Event-Id': 'bus-gone' });
        return r.status === 200 && r;
      },
      'the resent event to be accepted',
      60_000,
    );
    expect(resent.body).toEqual({ id: 'bus-gone' });
    await eventually(async () => (await byEvent()).get('bus-gone') === 1, 'the workflow of the resent event', 30_000);
  });
});

/** Opens a plain TCP connection to a NATS node, sends CONNECT without TLS, and gives back what the node answered before it hung up. */
function plainConnect(url: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    let seen = '';
    const socket = netConnect(Number(port), hostname, () => socket.write('CONNECT {"verbose":true}\r\nSUB plugflow.> 1\r\n'));
    socket.setTimeout(5_000, () => socket.destroy());
    socket.on('data', (d) => (seen += d.toString()));
    socket.on('close', () => resolve(seen));
    socket.on('error', () => {});
  });
}
