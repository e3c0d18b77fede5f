/**
 * The event bus: NATS JetStream, when the server is given one (`--event-bus nats://…`).
 *
 * Accepting an event is publishing it to a replicated stream and waiting for the stream's
 * acknowledgement, which the stream's leader gives once a quorum of its replicas wrote it: the
 * endpoint answers 200 only then, so an accepted event outlives the replica that accepted it,
 * and that replica's node. The publish carries a message id (the sender's event id, else a fresh
 * one), so a sender's retry of the same delivery within the stream's duplicate window is not
 * even stored twice.
 *
 * Dispatching is a durable pull consumer shared by every server replica: each takes the next
 * stored events, runs them through the bindings (dispatch.ts) and acknowledges an event once its
 * workflows exist, or its failures are recorded on its bindings (Warning Event, log, metric). A
 * replica that dies holding events does not acknowledge them, and the stream delivers them again
 * to a live replica after the ack wait. The workflows' names come from the event's id, so a
 * second delivery finds them created and creates nothing (deduplicated). An event that can never
 * succeed — it cannot be read or its seal does not open, or the API server stayed down for its
 * whole retry time (event-delivery.ts) — is published to the dead-letter stream with the reason,
 * logged and counted, then terminated.
 *
 * The replica's workers are shared fairly by namespace (fair-lanes.ts, lanes by the message's
 * subject): a namespace runs on at most half of them and holds at most half of the room to wait;
 * a delivery beyond its share is put back in the stream for a moment (nak with a short, growing
 * delay), so one namespace's flood or slow events never hold up another's.
 */
import { createHash, randomUUID } from 'node:crypto';
import { connect } from '@nats-io/transport-node';
import { jetstream, type ConsumerMessages, type JetStreamClient, type JsMsg } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import type { Logger } from '../log/logger.js';
import { errorMessage } from '../log/error-message.js';
import type { Dispatcher, EventJob } from './dispatch.js';
import { busConnectOptions, type BusConnection } from './event-bus-connection.js';
import { EnvelopeError, openEvent, sealEvent } from './event-envelope.js';
import { deferPauseMs, deliveryVerdict, failedFor } from './event-delivery.js';
import { DEAD_PREFIX, durableName, setUpStreams, SUBJECT_PREFIX } from './event-stream.js';
import { FairLanes } from './fair-lanes.js';
import type { ServerMetrics } from './metrics.js';

export interface EventBusOptions extends BusConnection {
  /** AES key every stored event is sealed with (event-envelope.ts `envelopeKey`). */
  key: Buffer;
  /** Replicas of the stream (default 3: one node may die without losing an event or the quorum). */
  replicas?: number;
  /** Stream name (default PLUGFLOW_EVENTS); the dead letters go to `<name>_DEAD`. */
  stream?: string;
  /** How long after its acceptance a stored event's failing dispatch is retried before it goes to the dead letters (default 10 minutes). */
  retryForMs?: number;
  /** How long a replica may hold an event without acknowledging it before it is delivered again (default 30 s). */
  ackWaitMs?: number;
  /** A second publish with the same id within this window is not stored (default 10 minutes). */
  duplicateWindowMs?: number;
  /** Longest a stored event waits to be dispatched (default 7 days), and a dead letter is kept. */
  maxAgeMs?: number;
  /** Longest wait for the stream to acknowledge a publish, retries included (default 8 s, under the 10 s webhook senders wait); then 503. */
  publishTimeoutMs?: number;
}

export const EVENT_BUS_DEFAULTS = {
  replicas: 3,
  stream: 'PLUGFLOW_EVENTS',
  retryForMs: 10 * 60_000,
  ackWaitMs: 30_000,
  duplicateWindowMs: 10 * 60_000,
  maxAgeMs: 7 * 24 * 3600_000,
  publishTimeoutMs: 8_000,
};

export interface EventBusDeps {
  dispatcher: Pick<Dispatcher, 'dispatch'>;
  logger: Logger;
  metrics: ServerMetrics;
  /** Events dispatched at once by this replica. */
  workers: number;
  /** Largest event body (the stream refuses larger messages). */
  maxBodyBytes: number;
  /** Dispatch only this namespace's events (a server given --namespace). */
  namespace?: string;
}

/** What storing an event gave. */
export interface Stored {
  /** The id the stream knows the event by (the sender's event id when it sent one). */
  id: string;
  /** The stream already held an event with this id (a sender's retry): not stored again. */
  duplicate: boolean;
}

export class EventBusError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EventBusError';
  }
}

const SETUP_DEADLINE_MS = 60_000;

export class EventBus {
  private messages?: ConsumerMessages;
  private consuming?: Promise<void>;
  private readonly inFlight = new Set<Promise<void>>();
  /** Deliveries waiting for a worker, and running, per namespace. */
  private readonly lanes: FairLanes<JsMsg>;
  /** Resolved when a waiting place frees up (the consumer waits for one when every place is taken). */
  private room?: () => void;
  private beat?: NodeJS.Timeout;
  private connected = true;
  private closing = false;

  private constructor(
    private readonly nc: NatsConnection,
    private readonly js: JetStreamClient,
    private readonly o: typeof EVENT_BUS_DEFAULTS & EventBusOptions,
    private readonly deps: EventBusDeps,
  ) {
    this.lanes = new FairLanes({ waiting: deps.workers * 4, running: deps.workers });
  }

  /** Connects, creates or updates the stream, the dead-letter stream and the consumer. */
  static async connect(options: EventBusOptions, deps: EventBusDeps): Promise<EventBus> {
    const o = { ...EVENT_BUS_DEFAULTS, ...options };
    if (!o.key) throw new EventBusError('the event bus needs --event-bus-key-file: every stored event is sealed with it');
    let reach: ReturnType<typeof busConnectOptions>;
    try {
      reach = busConnectOptions(o);
    } catch (err) {
      throw new EventBusError(errorMessage(err));
    }
    let nc: NatsConnection;
    try {
      nc = await connect({
        ...reach,
        name: 'plugflow-server',
        maxReconnectAttempts: -1,
        reconnectTimeWait: 500,
        timeout: 10_000,
      });
    } catch (err) {
      throw new EventBusError(`cannot reach the event bus at ${o.servers.join(', ')}: ${errorMessage(err)}`);
    }
    // While a node is down the stream may be electing a leader: set-up is retried for a minute.
    const deadline = Date.now() + SETUP_DEADLINE_MS;
    for (let attempt = 1; ; attempt++) {
      try {
        await setUpStreams(nc, { ...o, maxBodyBytes: deps.maxBodyBytes, ...(deps.namespace ? { namespace: deps.namespace } : {}) });
        break;
      } catch (err) {
        if (Date.now() + 1000 > deadline) {
          await nc.close().catch(() => {});
          throw new EventBusError(`setting up the event stream ${o.stream} on ${o.servers.join(', ')}: ${errorMessage(err)}`);
        }
        deps.logger.warn('the event stream is not ready yet; retrying', { stream: o.stream, attempt, error: errorMessage(err) });
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
    const bus = new EventBus(nc, jetstream(nc, { timeout: o.publishTimeoutMs }), o, deps);
    bus.watchStatus();
    return bus;
  }

  /** Why the bus cannot take events now (for /readyz), or undefined. */
  readinessProblem(): string | undefined {
    if (this.closing) return 'the event bus connection is closing';
    // No addresses: /readyz answers anyone.
    return this.connected ? undefined : 'disconnected from the event bus: reconnecting';
  }

  /** Events this replica holds and has not acknowledged. */
  get dispatching(): number {
    return this.inFlight.size;
  }

  /** Stores an accepted event; resolves once the replicated stream has it. */
  async store(job: Omit<EventJob, 'payload' | 'receivedAt'>, body: string): Promise<Stored> {
    const id =
      job.eventId === undefined
        ? randomUUID()
        : createHash('sha256').update(`${job.namespace}\0${job.discriminator}\0${job.eventId}`).digest('base64url');
    const subject = `${SUBJECT_PREFIX}${job.namespace}`;
    const data = sealEvent(job, body, { msgId: id, subject }, this.o.key);
    const started = performance.now();
    const until = started + this.o.publishTimeoutMs;
    // While the client reconnects to another node or the stream elects a new leader, a publish
    // fails at once (no responders) or times out. Publishing again under the same message id is
    // safe — the stream stores it once — so the sender waits a little instead of getting a 503.
    for (let pause = 50; ; pause = Math.min(pause * 2, 1000)) {
      try {
        const ack = await this.js.publish(subject, data, {
          msgID: id,
          timeout: Math.max(250, until - performance.now()),
        });
        this.deps.metrics.busPublishSeconds.observe((performance.now() - started) / 1000);
        return { id: job.eventId ?? id, duplicate: ack.duplicate };
      } catch (err) {
        if (this.closing || performance.now() + pause >= until) throw err;
        await new Promise((r) => setTimeout(r, pause));
      }
    }
  }

  /**
   * Starts taking stored events and dispatching them, `workers` at a time, in the background:
   * while the stream has no consumer leader (a node just died) or the connection is down, the
   * consumer is looked up again with a growing pause (0.5 s doubling to 5 s), and accepting
   * events goes on meanwhile.
   */
  start(): void {
    this.consuming = this.consumeLoop();
    // Deliveries waiting for a worker tell the stream they are in hand, as running ones do.
    this.beat = setInterval(() => this.lanes.forEachWaiting((m) => m.working()), Math.max(1000, this.o.ackWaitMs / 3));
    this.beat.unref();
  }

  private async consumeLoop(): Promise<void> {
    const durable = durableName(this.deps.namespace);
    let pause = 500;
    while (!this.closing) {
      try {
        const consumer = await this.js.consumers.get(this.o.stream, durable);
        // Short pull requests (5 s, heartbeats every 2.5 s): when the consumer's leader moves to
        // another node (a node died), the client notices two missed heartbeats and pulls again
        // within seconds, not after the default 30 s.
        const messages = await consumer.consume({ max_messages: Math.max(8, this.deps.workers * 2), expires: 5_000 });
        this.messages = messages;
        if (this.closing) await messages.close();
        pause = 500;
        for await (const m of messages) {
          const lane = m.subject.slice(SUBJECT_PREFIX.length);
          if (!this.lanes.offer(lane, m)) {
            if (this.lanes.waiting < this.lanes.waitingCap) {
              // This namespace holds its share: back to the stream for a moment.
              m.nak(deferPauseMs(m.info.deliveryCount));
              this.deps.metrics.busDeliveries.inc({ result: 'deferred' });
              continue;
            }
            // Every place is taken: wait for one before taking more from the stream.
            await new Promise<void>((r) => (this.room = r));
            if (!this.lanes.offer(lane, m)) {
              m.nak(deferPauseMs(m.info.deliveryCount));
              this.deps.metrics.busDeliveries.inc({ result: 'deferred' });
              continue;
            }
          }
          this.pump();
        }
      } catch (err) {
        if (this.closing) return;
        this.deps.logger.warn('the event bus consumer is not available; retrying', { retryInMs: pause, error: errorMessage(err) });
      }
      if (this.closing) return;
      await new Promise((r) => setTimeout(r, pause));
      pause = Math.min(pause * 2, 5_000);
    }
  }

  /** Starts the deliveries the lanes let run now. */
  private pump(): void {
    for (let next = this.lanes.next(); next; next = this.lanes.next()) {
      const { lane, item } = next;
      const p = this.handle(item).finally(() => {
        this.inFlight.delete(p);
        this.lanes.finished(lane);
        this.room?.();
        this.room = undefined;
        if (!this.closing) this.pump();
      });
      this.inFlight.add(p);
    }
  }

  /** One delivery: dispatch, then acknowledge, ask for a later delivery, or dead-letter. */
  private async handle(m: JsMsg): Promise<void> {
    const { logger, metrics } = this.deps;
    const msgId = m.headers?.get('Nats-Msg-Id') ?? '';
    const delivery = m.info.deliveryCount;
    let opened;
    try {
      opened = openEvent(m.data, { msgId, subject: m.subject }, this.o.key);
    } catch (err) {
      return this.deadLetter(m, err instanceof EnvelopeError ? err.message : errorMessage(err), undefined);
    }
    // Tell the stream this replica is still working while the API server is slow.
    const heartbeat = setInterval(() => m.working(), Math.max(1000, this.o.ackWaitMs / 3));
    try {
      const result = await this.deps.dispatcher.dispatch(opened.job);
      const verdict = deliveryVerdict(result, Date.now() - opened.acceptedAt, this.o.retryForMs);
      if (verdict.action === 'ack') {
        m.ack();
        metrics.busDeliveries.inc({ result: 'acked' });
        return;
      }
      if (verdict.action === 'dead-letter') {
        await this.deadLetter(m, verdict.reason, opened.job);
        return;
      }
      const delayMs = verdict.delayMs;
      logger.warn('event dispatch failed for now; the bus delivers it again', {
        namespace: opened.job.namespace,
        event: opened.job.eventId,
        delivery,
        retryInMs: delayMs,
        error: verdict.reason,
      });
      m.nak(delayMs);
      metrics.busDeliveries.inc({ result: 'retry' });
    } catch (err) {
      // A bug or an unexpected failure: not acknowledged, so the stream delivers it again, until
      // the event's retry time is over.
      logger.error('dispatching a stored event failed', {
        namespace: opened.job.namespace,
        event: opened.job.eventId,
        error: errorMessage(err),
      });
      const verdict = failedFor(errorMessage(err), Date.now() - opened.acceptedAt, this.o.retryForMs);
      if (verdict.action === 'dead-letter') await this.deadLetter(m, verdict.reason, opened.job);
      else if (verdict.action === 'retry') {
        m.nak(verdict.delayMs);
        metrics.busDeliveries.inc({ result: 'retry' });
      }
    } finally {
      clearInterval(heartbeat);
    }
  }

  /** Publishes the event with its reason to the dead letters, then terminates it in the stream. */
  private async deadLetter(m: JsMsg, reason: string, job: EventJob | undefined): Promise<void> {
    const subject = `${DEAD_PREFIX}${m.subject.slice(SUBJECT_PREFIX.length) || 'unknown'}`;
    const facts = {
      reason,
      stream: m.info.stream,
      sequence: m.seq,
      deliveries: m.info.deliveryCount,
      ...(job ? { namespace: job.namespace, discriminator: job.discriminator, event: job.eventId, caller: job.caller.id } : {}),
    };
    this.deps.logger.error('event moved to the dead letters', { ...facts, deadLetterStream: `${this.o.stream}_DEAD` });
    try {
      // The original message without its sealed token: the dead letters are for people to read.
      const body = job ? Buffer.from(`${JSON.stringify(facts)}\n${JSON.stringify(job.payload)}`) : Buffer.from(JSON.stringify(facts));
      await this.js.publish(subject, body, { msgID: `dead-${m.info.stream}-${m.seq}` });
      m.term(reason.slice(0, 200));
      this.deps.metrics.busDeliveries.inc({ result: 'dead_letter' });
    } catch (err) {
      this.deps.logger.error('could not write the dead letter; the event stays in the stream', { error: errorMessage(err) });
      m.nak(10_000);
    }
  }

  private watchStatus(): void {
    this.deps.metrics.busConnected.set(1);
    void (async () => {
      for await (const s of this.nc.status()) {
        if (s.type === 'disconnect') {
          this.connected = false;
          this.deps.metrics.busConnected.set(0);
          this.deps.logger.warn('disconnected from the event bus; reconnecting', { server: s.server });
        } else if (s.type === 'reconnect') {
          this.connected = true;
          this.deps.metrics.busConnected.set(1);
          this.deps.logger.info('reconnected to the event bus', { server: s.server });
        }
      }
    })().catch(() => {});
  }

  /** Stops taking events, finishes those in hand (others are delivered to other replicas), closes. */
  async close(timeoutMs: number): Promise<boolean> {
    this.closing = true;
    clearInterval(this.beat);
    await this.messages?.close().catch(() => {});
    // What waits for a worker here goes back to the stream at once, for another replica.
    for (const m of this.lanes.takeWaiting()) m.nak();
    this.room?.();
    const finished = await Promise.race([
      Promise.allSettled([...this.inFlight]).then(() => true),
      new Promise<boolean>((r) => setTimeout(() => r(false), timeoutMs).unref()),
    ]);
    await this.consuming;
    await this.nc.drain().catch(() => {});
    this.deps.metrics.busConnected.set(0);
    return finished;
  }
}
