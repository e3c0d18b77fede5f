/**
 * One namespace's slow events do not hold up another's on the event bus (issue 44, T4-10): a
 * real three-node JetStream cluster, one EventBus replica with four workers, and a dispatcher
 * that holds every event of namespace `slow` until the test lets go (as a template read that
 * hangs would). 40 slow events are stored first, then one of namespace `quick`: it is dispatched
 * at once, while `slow` runs on at most half of the workers; its extra deliveries are put back,
 * not lost, and every slow event is dispatched once released.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startNatsCluster, type NatsCluster } from '../src/devenv/nats-cluster.js';
import { createLogger } from '../src/log/logger.js';
import type { DispatchResult, EventJob } from '../src/server/dispatch.js';
import { EventBus } from '../src/server/event-bus.js';
import { envelopeKey } from '../src/server/event-envelope.js';
import { ServerMetrics } from '../src/server/metrics.js';
import { eventually } from './support/server.js';

const caller = { identity: { kind: 'own' as const }, id: 'server', hash: '' };

describe('event bus: fair shares per namespace', () => {
  let nats: NatsCluster;
  let bus: EventBus;
  const metrics = new ServerMetrics(false);
  const dispatched: string[] = [];
  const running = { slow: 0, quick: 0 };
  let peakSlow = 0;
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));

  beforeAll(async () => {
    nats = await startNatsCluster({ log: (l) => console.log(l) });
    const dispatcher = {
      dispatch: async (job: EventJob): Promise<DispatchResult> => {
        const ns = job.namespace as 'slow' | 'quick';
        running[ns]++;
        peakSlow = Math.max(peakSlow, running.slow);
        if (ns === 'slow') await released;
        running[ns]--;
        dispatched.push(job.eventId!);
        return { workflows: [], errors: [] };
      },
    };
    bus = await EventBus.connect(
      {
        ...nats.connection,
        key: envelopeKey(randomBytes(32)),
        stream: `FAIR_${randomBytes(3).toString('hex').toUpperCase()}`,
        replicas: 3,
      },
      { dispatcher, logger: createLogger('server', 'warn'), metrics, workers: 4, maxBodyBytes: 1 << 20 },
    );
  });

  afterAll(async () => {
    release();
    await bus?.close(5_000);
    await nats?.stop();
  });

  it("a flood of slow events in one namespace leaves workers for another's", async () => {
    const store = (namespace: string, id: string) =>
      bus.store({ namespace, discriminator: '', headers: [], eventId: id, caller }, JSON.stringify({ id }));
    for (let i = 0; i < 40; i++) await store('slow', `slow-${i}`);
    bus.start();
    await eventually(async () => running.slow === 2, 'the slow namespace on its share of the workers', 30_000);
    const sent = Date.now();
    await store('quick', 'quick-1');
    await eventually(async () => dispatched.includes('quick-1'), 'the quick event dispatched', 10_000);
    console.log(`[fairness] the quick event was dispatched ${Date.now() - sent} ms after it was stored, beside 40 held slow ones`);
    expect(peakSlow).toBe(2);
    const deferred = (await metrics.busDeliveries.get()).values.find((v) => v.labels.result === 'deferred')?.value ?? 0;
    expect(deferred).toBeGreaterThan(0);
    release();
    await eventually(async () => dispatched.filter((d) => d.startsWith('slow-')).length === 40, 'every slow event dispatched', 60_000);
    expect(new Set(dispatched).size).toBe(41);
  });
});
