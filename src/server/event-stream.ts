/**
 * The event bus's objects in JetStream (event-bus.ts uses them): the work stream
 * `<stream>` on `plugflow.events.<namespace>`, the dead letters `<stream>_DEAD` on
 * `plugflow.dead-events.<namespace>`, and the durable consumer every server replica shares —
 * created when missing, brought to these settings when present.
 */
import {
  AckPolicy,
  DeliverPolicy,
  DiscardPolicy,
  JetStreamApiError,
  jetstreamManager,
  RetentionPolicy,
  StorageType,
} from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';

export const SUBJECT_PREFIX = 'plugflow.events.';
export const DEAD_PREFIX = 'plugflow.dead-events.';

/** JetStream counts time in nanoseconds. */
const ns = (ms: number) => ms * 1_000_000;

export interface StreamSettings {
  stream: string;
  replicas: number;
  duplicateWindowMs: number;
  maxAgeMs: number;
  ackWaitMs: number;
  /** Largest event body: the stream refuses larger messages. */
  maxBodyBytes: number;
  /** A server of one namespace has a consumer of its own, on that namespace's subject. */
  namespace?: string;
}

/** The consumer shared by the replicas (of one namespace, for a server given --namespace). */
export function durableName(namespace: string | undefined): string {
  return namespace ? `plugflow-dispatch-${namespace}` : 'plugflow-dispatch';
}

/** Creates or updates the stream, the dead-letter stream and the shared consumer. */
export async function setUpStreams(nc: NatsConnection, o: StreamSettings): Promise<void> {
  const jsm = await jetstreamManager(nc, { timeout: 5_000 });
  const stream = {
    name: o.stream,
    subjects: [`${SUBJECT_PREFIX}>`],
    retention: RetentionPolicy.Workqueue,
    storage: StorageType.File,
    num_replicas: o.replicas,
    duplicate_window: ns(o.duplicateWindowMs),
    max_age: ns(o.maxAgeMs),
    max_msg_size: o.maxBodyBytes + 64 * 1024,
    discard: DiscardPolicy.Old,
  };
  const dead = {
    name: `${o.stream}_DEAD`,
    subjects: [`${DEAD_PREFIX}>`],
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
    num_replicas: o.replicas,
    max_age: ns(o.maxAgeMs),
    max_msg_size: o.maxBodyBytes + 128 * 1024,
  };
  for (const config of [stream, dead]) {
    try {
      await jsm.streams.info(config.name);
      await jsm.streams.update(config.name, config);
    } catch (err) {
      if (!(err instanceof JetStreamApiError) || err.status !== 404) throw err;
      await jsm.streams.add(config);
    }
  }
  const durable = durableName(o.namespace);
  const consumer = {
    durable_name: durable,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    ack_wait: ns(o.ackWaitMs),
    // Unlimited: a delivery put back for fairness is no failure; event-delivery.ts gives up by time.
    max_deliver: -1,
    max_ack_pending: 10_000,
    filter_subject: o.namespace ? `${SUBJECT_PREFIX}${o.namespace}` : `${SUBJECT_PREFIX}>`,
  };
  try {
    await jsm.consumers.info(o.stream, durable);
    await jsm.consumers.update(o.stream, durable, consumer);
  } catch (err) {
    if (!(err instanceof JetStreamApiError) || err.status !== 404) throw err;
    await jsm.consumers.add(o.stream, consumer);
  }
}
