/**
 * Synchronization (`synchronization` of the workflow spec and of templates): mutexes and
 * semaphores. The engine decides who may run; the controller's lock table
 * (src/controller/lock-table.ts) decides who is granted a lock, because that depends on every
 * workflow of the cluster, and hands its grants in as `Observations.locks`.
 *
 * - A workflow-level lock is held by `<ns>/<workflow>` from before the first node starts until
 *   the workflow ends; until it is granted the workflow stays Pending with a message naming the
 *   lock and its holders.
 * - A template-level lock is held by `<ns>/<workflow>/<node id>`; the node is created Pending
 *   with that message and starts (as a new node would, under `parallelism`) once granted.
 * - A holder takes all its locks at once or none (so one template naming two locks cannot hold
 *   one and wait for the other), and keeps what it was granted until its node ends — also when
 *   a reconcile does not walk it — so a lock is never given back while its holder still runs.
 * - What is held and waited for goes into `status.synchronization` (the peer's shape) and into
 *   `ReconcileResult.locks`; the controller rebuilds its table from the statuses after a
 *   restart, so a lock survives the controller (COMPAT: lock keys `<ns>/Mutex/<name>` and
 *   `<ns>/ConfigMap/<configmap>/<key>`).
 *
 * Locks are namespaced: a `namespace` other than the workflow's own is refused, because a lock
 * shared across namespaces would let one tenant's workflows stall another's.
 */
import type { Synchronization, SynchronizationStatus, NodeStatus, SemaphoreRef, Mutex } from '../api/index.js';
import type { LockClaim, LockObservation } from './contract.js';
import { renderString } from './expressions.js';
import type { Vars } from './variables.js';
import { errorMessage } from '../log/error-message.js';

/** The start of the message of a node or workflow waiting for a lock. */
export const LOCK_WAIT_PREFIX = 'Waiting for lock';

export interface LockSpec {
  key: string;
  /** Where it is named, for messages: `spec.synchronization.mutex`. */
  field: string;
}

export type LockKind = 'mutex' | 'semaphore';

export function mutexKey(namespace: string, name: string): string {
  return `${namespace}/Mutex/${name}`;
}

export function semaphoreKey(namespace: string, configMap: string, key: string): string {
  return `${namespace}/ConfigMap/${configMap}/${key}`;
}

/** The holder of a workflow-level lock. */
export function workflowHolder(namespace: string, workflow: string): string {
  return `${namespace}/${workflow}`;
}

/** The holder of a template-level lock. */
export function nodeHolder(namespace: string, workflow: string, nodeId: string): string {
  return `${namespace}/${workflow}/${nodeId}`;
}

/** What a lock key names: a mutex, or a semaphore with its ConfigMap and key. */
export type ParsedLock =
  { kind: 'mutex'; namespace: string; name: string } | { kind: 'semaphore'; namespace: string; configMap: string; key: string };

export function parseLockKey(key: string): ParsedLock | undefined {
  const parts = key.split('/');
  if (parts.length >= 3 && parts[1] === 'Mutex') return { kind: 'mutex', namespace: parts[0]!, name: parts.slice(2).join('/') };
  if (parts.length === 4 && parts[1] === 'ConfigMap')
    return { kind: 'semaphore', namespace: parts[0]!, configMap: parts[2]!, key: parts[3]! };
  return undefined;
}

/** A Kubernetes object name (a semaphore's ConfigMap), and a ConfigMap data key. */
const OBJECT_NAME = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;
const DATA_KEY = /^[-._a-zA-Z0-9]{1,253}$/;

/**
 * The lock keys `sync` names, rendered with `vars`, or an error naming the field. `where` is the
 * path of the synchronization field (`spec.synchronization`, `template "x".synchronization`).
 */
export function lockSpecsOf(
  sync: Synchronization | undefined,
  namespace: string,
  where: string,
  vars: Vars,
): { ok: true; locks: LockSpec[] } | { ok: false; error: string } {
  if (!sync) return { ok: true, locks: [] };
  const locks: LockSpec[] = [];
  const mutexes: [Mutex | undefined, string][] = [
    [sync.mutex, `${where}.mutex`],
    ...(sync.mutexes ?? []).map((m, i): [Mutex, string] => [m, `${where}.mutexes[${i}]`]),
  ];
  const semaphores: [SemaphoreRef | undefined, string][] = [
    [sync.semaphore, `${where}.semaphore`],
    ...(sync.semaphores ?? []).map((s, i): [SemaphoreRef, string] => [s, `${where}.semaphores[${i}]`]),
  ];
  try {
    for (const [m, field] of mutexes) {
      if (!m) continue;
      const ns = ownNamespace(m.namespace, namespace, field);
      const name = renderString(String(m.name ?? ''), vars, `${field}.name`);
      if (name.trim() === '') return { ok: false, error: `${field}.name: a mutex needs a name` };
      locks.push({ key: mutexKey(ns, name), field });
    }
    for (const [s, field] of semaphores) {
      if (!s) continue;
      const ns = ownNamespace(s.namespace, namespace, field);
      const ref = s.configMapKeyRef;
      const cm = renderString(String(ref?.name ?? ''), vars, `${field}.configMapKeyRef.name`);
      const key = renderString(String(ref?.key ?? ''), vars, `${field}.configMapKeyRef.key`);
      if (!OBJECT_NAME.test(cm))
        return { ok: false, error: `${field}.configMapKeyRef.name: ${JSON.stringify(cm)} is not a ConfigMap name` };
      if (!DATA_KEY.test(key)) return { ok: false, error: `${field}.configMapKeyRef.key: ${JSON.stringify(key)} is not a ConfigMap key` };
      locks.push({ key: semaphoreKey(ns, cm, key), field });
    }
  } catch (err) {
    return { ok: false, error: errorMessage(err) };
  }
  const keys = new Set<string>();
  return { ok: true, locks: locks.filter((l) => !keys.has(l.key) && keys.add(l.key)) };
}

function ownNamespace(given: string | undefined, namespace: string, field: string): string {
  if (given === undefined || given === '' || given === namespace) return namespace;
  throw new Error(
    `${field}.namespace: ${JSON.stringify(given)} is not the workflow's namespace ${JSON.stringify(namespace)}: locks are shared only within a namespace, so that no other namespace's workflows can stall these`,
  );
}

export type Acquired = { kind: 'held' } | { kind: 'waiting'; message: string } | { kind: 'error'; message: string };

/**
 * The locks of one reconcile: what the controller granted (observed), what this workflow's
 * holders hold and wait for after it. Created by reconcile.ts; templates acquire through it.
 */
export class LockBook {
  /** Holder → the locks it holds; starts with every grant whose holder has not ended. */
  private readonly holding = new Map<string, string[]>();
  private readonly waiting = new Map<string, string[]>();

  constructor(
    private readonly observed: Readonly<Record<string, LockObservation>>,
    /** Whether a holder (`<ns>/<wf>` or `<ns>/<wf>/<node id>`) is still running, for grants carried over. */
    alive: (holder: string) => boolean,
  ) {
    for (const [lock, obs] of Object.entries(observed)) {
      for (const holder of obs.granted) {
        if (!alive(holder)) continue;
        const locks = this.holding.get(holder) ?? [];
        if (!locks.includes(lock)) locks.push(lock);
        this.holding.set(holder, locks);
      }
    }
  }

  /** Takes every lock in `locks` for `holder`, or none: held, waiting (with the message), or an error. */
  acquire(locks: readonly LockSpec[], holder: string): Acquired {
    for (const l of locks) {
      const problem = this.observed[l.key]?.problem;
      if (problem) return { kind: 'error', message: `${l.field}: ${problem}` };
    }
    const missing = locks.filter((l) => !this.observed[l.key]?.granted.includes(holder));
    if (missing.length === 0) {
      const held = this.holding.get(holder) ?? [];
      for (const l of locks) if (!held.includes(l.key)) held.push(l.key);
      this.holding.set(holder, held);
      this.waiting.delete(holder);
      return { kind: 'held' };
    }
    // Nothing is held while waiting: what was granted of the set stays with the lock table's grant.
    this.waiting.set(
      holder,
      locks.map((l) => l.key),
    );
    return { kind: 'waiting', message: waitingMessage(missing[0]!.key, this.observed[missing[0]!.key]) };
  }

  /** The holder ended: its locks go back. */
  release(holder: string): void {
    this.holding.delete(holder);
    this.waiting.delete(holder);
  }

  /** Gives back everything (the workflow ended). */
  releaseAll(): void {
    this.holding.clear();
    this.waiting.clear();
  }

  claims(): { holding: LockClaim[]; waiting: LockClaim[] } {
    const list = (m: Map<string, string[]>) => [...m].map(([holder, locks]) => ({ holder, locks: [...locks] }));
    return { holding: list(this.holding), waiting: list(this.waiting) };
  }

  /** status.synchronization in the peer's shape, or undefined when nothing is held or waited for. */
  status(): SynchronizationStatus | undefined {
    const out: SynchronizationStatus = {};
    const semHolding = new Map<string, string[]>();
    for (const [holder, locks] of this.holding) {
      for (const lock of locks) {
        if (parseLockKey(lock)?.kind === 'mutex') ((out.mutex ??= {}).holding ??= []).push({ mutex: lock, holder });
        else semHolding.set(lock, [...(semHolding.get(lock) ?? []), holder]);
      }
    }
    for (const [semaphore, holders] of semHolding) ((out.semaphore ??= {}).holding ??= []).push({ semaphore, holders });
    const waited = new Set<string>();
    for (const locks of this.waiting.values()) for (const lock of locks) waited.add(lock);
    for (const lock of waited) {
      const holders = this.observed[lock]?.holders ?? [];
      if (parseLockKey(lock)?.kind === 'mutex') ((out.mutex ??= {}).waiting ??= []).push({ mutex: lock, holder: holders[0] ?? '' });
      else ((out.semaphore ??= {}).waiting ??= []).push({ semaphore: lock, holders: [...holders] });
    }
    return out.mutex || out.semaphore ? out : undefined;
  }
}

/** `Waiting for lock ns/Mutex/db (held by ns/wf-1)`; a semaphore also says its limit. */
export function waitingMessage(lock: string, obs: LockObservation | undefined): string {
  const holders = obs?.holders ?? [];
  const limit = parseLockKey(lock)?.kind === 'semaphore' && obs?.limit !== undefined ? `limit ${obs.limit}, ` : '';
  const held =
    holders.length > 0
      ? `held by ${holders.slice(0, 5).join(', ')}${holders.length > 5 ? ` and ${holders.length - 5} more` : ''}`
      : 'queued';
  return `${LOCK_WAIT_PREFIX} ${lock} (${limit}${held})`;
}

/**
 * Lock keys a workflow's status holds or waits for (for the controller's observations and its
 * table rebuilt after a restart). Waiting entries name locks, not the waiting holders.
 */
export function lockKeysInStatus(status: SynchronizationStatus | undefined): { holding: [string, string][]; waiting: string[] } {
  const holding: [string, string][] = [];
  for (const h of status?.mutex?.holding ?? [])
    if (typeof h?.mutex === 'string' && typeof h.holder === 'string') holding.push([h.mutex, h.holder]);
  for (const h of status?.semaphore?.holding ?? [])
    if (typeof h?.semaphore === 'string' && Array.isArray(h.holders))
      for (const holder of h.holders) if (typeof holder === 'string') holding.push([h.semaphore, holder]);
  const waiting = [
    ...(status?.mutex?.waiting ?? []).map((w) => w?.mutex),
    ...(status?.semaphore?.waiting ?? []).map((w) => w?.semaphore),
  ].filter((k): k is string => typeof k === 'string');
  return { holding, waiting };
}

/** Whether `node` is a node created to wait for its template's lock, which has not started. */
export function isWaitingForLock(node: NodeStatus): boolean {
  return node.phase === 'Pending' && !node.podName && !(node.children?.length ?? 0) && (node.message ?? '').startsWith(LOCK_WAIT_PREFIX);
}
