/**
 * The event bus of `plugflow dev --event-bus` (the same startNatsCluster) is closed to the pods
 * of the cluster (issue 44, T4-1): a step pod, run for real by the local pod runner (which gives
 * pods the host's network, so the bus's port is in reach), tries what a hostile tenant would —
 * a plain connection, a TLS one without a login, a made-up login — to subscribe to every event
 * and to publish a forged one. Each attempt is refused by the node, and the server's own events
 * still flow (an event sent through the endpoint, stored on the same bus, makes its workflow).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Workflow } from '../src/api/index.js';
import { LABEL_WORKFLOW_EVENT_BINDING } from '../src/api/index.js';
import { applyInto, expectPhase, nodeNamed, startE2eStack, waitFor, type E2eStack } from './support/e2e.js';
import { cluster } from './support/cluster.js';
import { call } from './support/server.js';

const SLOW = 240_000;

/**
 * What the probe tries, each on a connection of its own; it prints one JSON object: per attempt,
 * the INFO line's flags and what the node answered before it hung up.
 */
const PROBE = String.raw`
import json, os, socket, ssl
host, port = os.environ["BUS"].split(":")
port = int(port)
ATTACK = b'CONNECT {"verbose":true,"pedantic":false%s}\r\nSUB plugflow.> 1\r\nSUB $JS.API.> 2\r\nPUB plugflow.events.victim 2\r\nhi\r\nPING\r\n'

def read_all(s):
    out = b""
    s.settimeout(5)
    try:
        while True:
            d = s.recv(4096)
            if not d:
                break
            out += d
    except Exception as e:
        out += ("<" + type(e).__name__ + ">").encode()
    return out.decode("utf8", "replace")

def first_line(s):
    line = b""
    while not line.endswith(b"\r\n"):
        c = s.recv(1)
        if not c:
            break
        line += c
    info = json.loads(line[5:].decode()) if line.startswith(b"INFO ") else {}
    return {"auth_required": info.get("auth_required"), "tls_required": info.get("tls_required")}

def attempt(use_tls, login):
    s = socket.create_connection((host, port), timeout=5)
    info = first_line(s)
    if use_tls:
        ctx = ssl.create_default_context()
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        s = ctx.wrap_socket(s, server_hostname=host)
    s.sendall(ATTACK % login)
    return {"info": info, "answer": read_all(s)}

print(json.dumps({
    "plain": attempt(False, b""),
    "tlsAnonymous": attempt(True, b""),
    "tlsGuessed": attempt(True, b',"user":"plugflow-server","pass":"plugflow"'),
}))
`;

describe('event bus: closed to pods (e2e)', () => {
  let stack: E2eStack;

  beforeAll(async () => {
    stack = await startE2eStack({ prefix: 'busauth', eventBus: true });
  }, SLOW);
  afterAll(async () => {
    await stack?.stop();
  }, SLOW);

  it(
    'a pod without credentials can neither subscribe nor publish: plain, anonymous and guessed logins are refused',
    async () => {
      const url = new URL(stack.nats!.servers[0]!);
      const wf = {
        apiVersion: 'plugflow.io/v1alpha1',
        kind: 'Workflow',
        metadata: { generateName: 'bus-probe-' },
        spec: {
          entrypoint: 'probe',
          templates: [
            {
              name: 'probe',
              script: {
                image: 'python:3.12',
                command: ['python3'],
                env: [{ name: 'BUS', value: `${url.hostname}:${url.port}` }],
                source: PROBE,
              },
            },
          ],
        },
      } as Workflow;
      const done = await stack.waitForCompletion(await stack.submit(wf), 120_000);
      expectPhase(done, 'Succeeded');
      const seen = JSON.parse(nodeNamed(done, done.metadata.name!).outputs!.result!) as Record<
        string,
        { info: { auth_required: boolean; tls_required: boolean }; answer: string }
      >;
      for (const [how, r] of Object.entries(seen)) {
        expect(r.info, how).toEqual({ auth_required: true, tls_required: true });
        // No subscription, no message, not even a PONG: the node never took the connection.
        expect(r.answer, how).not.toMatch(/\+OK|MSG |PONG/);
      }
      expect(seen.tlsAnonymous!.answer).toMatch(/-ERR 'Authorization Violation'/);
      expect(seen.tlsGuessed!.answer).toMatch(/-ERR 'Authorization Violation'/);
    },
    SLOW,
  );

  it(
    "the server's own connection works: an event stored on that bus makes its workflow",
    async () => {
      const ns = stack.namespace;
      await applyInto(stack.admin, ns, [
        {
          apiVersion: 'plugflow.io/v1alpha1',
          kind: 'WorkflowTemplate',
          metadata: { name: 'on-ping' },
          spec: { entrypoint: 'main', templates: [{ name: 'main', container: { image: 'busybox', command: ['true'] } }] },
        },
        {
          apiVersion: 'plugflow.io/v1alpha1',
          kind: 'WorkflowEventBinding',
          metadata: { name: 'ping' },
          spec: { event: { selector: 'payload.kind == "ping"' }, submit: { workflowTemplateRef: { name: 'on-ping' } } },
        },
      ] as never);
      const server = stack.server!;
      await waitFor('the binding in the server cache', async () => server.bindings(ns).length === 1, { timeoutMs: 30_000 });
      const reply = await call('POST', `${server.url}/api/v1/events/${ns}/`, {
        token: cluster().adminToken,
        body: { kind: 'ping' },
        headers: { 'X-Event-Id': 'ping-1' },
      });
      expect(reply).toMatchObject({ status: 200, body: { id: 'ping-1' } });
      await waitFor(
        'the workflow of the event',
        async () => {
          const list = (await stack.objects.listNamespacedCustomObject({
            group: 'plugflow.io',
            version: 'v1alpha1',
            namespace: ns,
            plural: 'workflows',
            labelSelector: `${LABEL_WORKFLOW_EVENT_BINDING}=ping`,
          })) as { items: unknown[] };
          return list.items.length === 1;
        },
        { timeoutMs: 60_000 },
      );
    },
    SLOW,
  );
});
