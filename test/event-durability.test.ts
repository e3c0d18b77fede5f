/**
 * "Accepted" means "will happen": a stream of events is sent while the accepting server is
 * SIGKILLed at random points (and restarted, as a Deployment would), and every event answered
 * 200 must end as exactly one workflow — in the embedded default (sync dispatch: 200 once the
 * workflow exists) and with the event bus (a real three-node JetStream cluster, one of whose
 * nodes is SIGKILLed too). A sender that gets no answer resends the same delivery (same event
 * id), as webhook senders do; that must not make a second workflow either.
 *
 * The kill schedule comes from a seed, printed, so a failure can be replayed: PLUGFLOW_SEED=….
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANNOTATION_EVENT_ID, LABEL_WORKFLOW_EVENT_BINDING } from '../src/api/index.js';
import { freePort } from '../src/devenv/control-plane.js';
import { startNatsCluster, type NatsCluster } from '../src/devenv/nats-cluster.js';
import { deleteTestNamespace } from './support/cluster.js';
import { eventNamespace } from './support/event-namespace.js';
import { eventually, listWorkflows, serverKubeConfig } from './support/server.js';
import { Component, sleep } from './soak/component.js';
import { Prng } from './soak/prng.js';

const EVENTS = 240;
/** Pause of each sender between events: a stream over several seconds, so the kills land inside it. */
const PACE_MS = 50;
const SENDERS = 8;
const KILLS = 4;

interface Tally {
  sent: number;
  accepted: number;
  resends: number;
  kills: number;
}

describe('accepted events survive the accepting server being SIGKILLed', () => {
  let ns: string;
  let alice: string;
  let dir: string;
  let kubeconfig: string;
  let nats: NatsCluster;
  const seed = Number(process.env.PLUGFLOW_SEED ?? Math.floor(Math.random() * 2 ** 31));

  beforeAll(async () => {
    console.log(`[event-durability] seed ${seed} (replay with PLUGFLOW_SEED=${seed})`);
    ({ ns, alice } = await eventNamespace('durable', 'deploy'));
    dir = mkdtempSync(join(tmpdir(), 'plugflow-durability-'));
    kubeconfig = join(dir, 'server.kubeconfig');
    writeFileSync(kubeconfig, (await serverKubeConfig()).exportConfig(), { mode: 0o600 });
    writeFileSync(join(dir, 'bus.key'), randomBytes(32).toString('hex'), { mode: 0o600 });
    nats = await startNatsCluster({ log: (l) => console.log(l) });
  });

  afterAll(async () => {
    await nats?.stop();
    await deleteTestNamespace(ns);
  });

  /** Sends EVENTS events (ids `<mode>-<n>`) while `chaos` runs; resends a delivery until it is answered 200. */
  async function run(mode: string, server: Component, url: string, chaos: (sending: () => boolean) => Promise<number>): Promise<Tally> {
    const tally: Tally = { sent: 0, accepted: 0, resends: 0, kills: 0 };
    let next = 0;
    let sending = true;
    const sender = async () => {
      for (let n = next++; n < EVENTS; n = next++) {
        tally.sent++;
        // A webhook sender's patience: resend for up to two minutes (a restart under load is slow).
        const giveUp = Date.now() + 120_000;
        for (let attempt = 1; ; attempt++) {
          if (attempt > 1) tally.resends++;
          const status = await request(`${url}/api/v1/events/${ns}/`, {
            method: 'POST',
            headers: { authorization: `Bearer ${alice}`, 'content-type': 'application/json', 'x-event-id': `${mode}-${n}` },
            body: JSON.stringify({ kind: 'deploy', n }),
            headersTimeout: 15_000,
          }).then(
            async (r) => (await r.body.text(), r.statusCode),
            () => 0,
          );
          if (status === 200) {
            tally.accepted++;
            await sleep(PACE_MS);
            break;
          }
          if (Date.now() > giveUp) throw new Error(`event ${mode}-${n} was never accepted in 120 s (last answer ${status || 'none'})`);
          await sleep(100);
        }
      }
    };
    const chaosDone = chaos(() => sending);
    await Promise.all(Array.from({ length: SENDERS }, sender));
    sending = false;
    tally.kills = await chaosDone;
    await server.stop();
    return tally;
  }

  /** Kills the server KILLS times at random points while events flow, restarting it each time. */
  const killServer = (server: Component, prng: Prng) => async (sending: () => boolean) => {
    let kills = 0;
    while (kills < KILLS && sending()) {
      await sleep(prng.int(150, 900));
      if (!sending()) break;
      await server.stop('SIGKILL', 0);
      kills++;
      await server.start();
    }
    return kills;
  };

  async function judge(mode: string, tally: Tally): Promise<void> {
    const seen = new Map<string, string[]>();
    await eventually(
      async () => {
        seen.clear();
        for (const w of await listWorkflows(ns, `${LABEL_WORKFLOW_EVENT_BINDING}=on-deploy`)) {
          const id = w.metadata.annotations?.[ANNOTATION_EVENT_ID] as string;
          if (id?.startsWith(`${mode}-`)) seen.set(id, [...(seen.get(id) ?? []), w.metadata.name as string]);
        }
        return seen.size >= EVENTS;
      },
      `a workflow for each of the ${EVENTS} accepted events (${mode})`,
      90_000,
    ).catch(() => undefined);
    const missing = Array.from({ length: EVENTS }, (_, n) => `${mode}-${n}`).filter((id) => !seen.has(id));
    const twice = [...seen].filter(([, names]) => names.length > 1);
    console.log(
      `[event-durability] ${mode}: sent ${tally.sent}, accepted ${tally.accepted}, resends ${tally.resends}, server SIGKILLs ${tally.kills}, ` +
        `workflows ${[...seen.values()].flat().length}, lost ${missing.length}, duplicated ${twice.length}`,
    );
    expect(tally.kills).toBeGreaterThan(0);
    expect(tally.accepted).toBe(EVENTS);
    expect(missing).toEqual([]);
    expect(twice).toEqual([]);
  }

  const serverArgs = async (extra: string[]) => {
    const [port, metricsPort] = [await freePort(), await freePort()];
    const args = ['server', '--kubeconfig', kubeconfig, '--port', String(port), '--secure=false', '--metrics-port', String(metricsPort)];
    return { url: `http://127.0.0.1:${port}`, args: [...args, '--namespace', ns, ...extra] };
  };

  it('embedded default (sync dispatch): every event answered 200 has exactly one workflow', async () => {
    const { url, args } = await serverArgs([]);
    const server = new Component({ name: 'server-embedded', args, readyUrl: `${url}/readyz`, logDir: dir });
    await server.start();
    const tally = await run('embedded', server, url, killServer(server, new Prng(seed)));
    await judge('embedded', tally);
  });

  it('event bus (three JetStream nodes, one SIGKILLed too): every event answered 200 has exactly one workflow', async () => {
    const { url, args } = await serverArgs([
      ...nats.serverFlags(dir),
      '--event-bus-key-file',
      join(dir, 'bus.key'),
      '--event-bus-ack-wait',
      '3',
    ]);
    const server = new Component({ name: 'server-bus', args, readyUrl: `${url}/readyz`, logDir: dir });
    await server.start();
    const prng = new Prng(seed + 1);
    const tally = await run('bus', server, url, async (sending) => {
      const killing = killServer(server, prng)(sending);
      // A JetStream node dies mid-stream and comes back.
      await sleep(prng.int(300, 1200));
      const node = prng.int(0, 2);
      await nats.kill(node);
      await sleep(1000);
      await nats.restart(node);
      return killing;
    });
    // The last incarnation was stopped: events it held go to the next one only after the ack
    // wait, so a fresh replica takes what is left.
    await server.start();
    await judge('bus', tally);
    await server.stop();
  });
});
