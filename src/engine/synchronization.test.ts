import { describe, expect, it } from 'vitest';
import type { Template, WorkflowSpec } from '../api/index.js';
import { World } from './test-world.js';
import { lockSpecsOf, parseLockKey, waitingMessage } from './synchronization.js';

const echo: Template = { name: 'echo', container: { image: 'alpine', command: ['echo', 'hi'] } };
const DB = 'ns/Mutex/db';

/** Grants `holders` of this workflow (and shows `others` holding it) the way the lock table would. */
function grant(w: World, lock: string, granted: string[], others: string[] = [], limit?: number): void {
  w.locks ??= {};
  w.locks[lock] = { granted, holders: [...granted, ...others], ...(limit !== undefined ? { limit } : {}) };
}

describe('workflow-level synchronization', () => {
  const spec: WorkflowSpec = { entrypoint: 'echo', synchronization: { mutex: { name: 'db' } }, templates: [echo] };

  it('waits Pending, naming the lock and its holder, until the mutex is granted; then runs and holds it', () => {
    const w = new World(spec);
    grant(w, DB, [], ['ns/other']);
    const waiting = w.reconcile();
    expect(waiting.status).toMatchObject({ phase: 'Pending', message: 'Waiting for lock ns/Mutex/db (held by ns/other)' });
    expect(waiting.status.synchronization).toEqual({ mutex: { waiting: [{ mutex: DB, holder: 'ns/other' }] } });
    expect(waiting.actions).toEqual([]);
    expect(waiting.locks).toEqual({ holding: [], waiting: [{ holder: 'ns/wf', locks: [DB] }] });
    expect(waiting.status.startedAt).toBeUndefined();

    grant(w, DB, ['ns/wf']);
    const running = w.reconcile();
    expect(running.status.phase).toBe('Running');
    expect(running.actions.map((a) => a.kind)).toEqual(['createPod']);
    expect(running.status.synchronization).toEqual({ mutex: { holding: [{ mutex: DB, holder: 'ns/wf' }] } });
    expect(running.locks).toEqual({ holding: [{ holder: 'ns/wf', locks: [DB] }], waiting: [] });

    w.succeedPod('wf');
    const done = w.reconcile();
    expect(done.status.phase).toBe('Succeeded');
    expect(done.status.synchronization).toBeUndefined();
    expect(done.locks).toEqual({ holding: [], waiting: [] });
  });

  it('fails at once, naming the field, for a lock of another namespace', () => {
    const w = new World({ ...spec, synchronization: { mutex: { name: 'db', namespace: 'prod' } } });
    const r = w.reconcile();
    expect(r.status.phase).toBe('Failed');
    expect(r.status.message).toContain('spec.synchronization.mutex.namespace: "prod" is not the workflow\'s namespace "ns"');
  });

  it("fails, naming the field, when the semaphore's limit cannot be read", () => {
    const w = new World({ ...spec, synchronization: { semaphore: { configMapKeyRef: { name: 'limits', key: 'db' } } } });
    w.locks = { 'ns/ConfigMap/limits/db': { granted: [], holders: [], problem: 'ConfigMap ns/limits does not exist' } };
    const r = w.reconcile();
    expect(r.status).toMatchObject({ phase: 'Failed', message: 'spec.synchronization.semaphore: ConfigMap ns/limits does not exist' });
    expect(r.locks).toBeUndefined();
  });

  it('a workflow stopped while it waits ends without ever taking the lock', () => {
    const w = new World(spec);
    w.reconcile();
    w.workflow.spec!.shutdown = 'Stop';
    const r = w.reconcile();
    expect(r.status.phase).toBe('Failed');
    expect(r.actions.filter((a) => a.kind === 'createPod')).toEqual([]);
    expect(r.status.synchronization).toBeUndefined();
  });
});

describe('template-level synchronization', () => {
  const spec: WorkflowSpec = {
    entrypoint: 'main',
    templates: [
      {
        name: 'main',
        steps: [
          [
            { name: 'a', template: 'locked' },
            { name: 'b', template: 'locked' },
          ],
        ],
      },
      { ...echo, name: 'locked', synchronization: { mutex: { name: 'db' } } },
    ],
  };

  it('creates a pod only for the granted holder; the other node waits Pending and starts once granted', () => {
    const w = new World(spec);
    const first = w.reconcile();
    expect(first.actions.filter((a) => a.kind === 'createPod')).toEqual([]);
    const [a, b] = [w.node('a'), w.node('b')];
    expect(a).toMatchObject({ phase: 'Pending', message: 'Waiting for lock ns/Mutex/db (queued)', type: 'Pod' });
    expect(first.locks?.waiting).toEqual([
      { holder: `ns/wf/${a.id}`, locks: [DB] },
      { holder: `ns/wf/${b.id}`, locks: [DB] },
    ]);

    grant(w, DB, [`ns/wf/${a.id}`]);
    const second = w.reconcile();
    expect(second.actions.filter((x) => x.kind === 'createPod').map((x) => x.kind === 'createPod' && x.nodeId)).toEqual([a.id]);
    expect(w.node('a').message).toBeUndefined();
    expect(w.node('b').message).toBe(`Waiting for lock ns/Mutex/db (held by ns/wf/${a.id})`);
    expect(second.status.synchronization).toEqual({
      mutex: { holding: [{ mutex: DB, holder: `ns/wf/${a.id}` }], waiting: [{ mutex: DB, holder: `ns/wf/${a.id}` }] },
    });

    // a ends: its hold is given back in the same reconcile (not in the claims any more).
    w.succeedPod('a');
    const third = w.reconcile();
    expect(third.locks).toEqual({ holding: [], waiting: [{ holder: `ns/wf/${b.id}`, locks: [DB] }] });

    grant(w, DB, [`ns/wf/${b.id}`]);
    const fourth = w.reconcile();
    expect(fourth.actions.filter((x) => x.kind === 'createPod').map((x) => x.kind === 'createPod' && x.nodeId)).toEqual([b.id]);
    w.succeedPod('b');
    expect(w.reconcile().status.phase).toBe('Succeeded');
  });

  it('keeps a grant whose node still runs even if the walk does not ask for it again', () => {
    const w = new World(spec);
    w.reconcile();
    const a = w.node('a');
    grant(w, DB, [`ns/wf/${a.id}`]);
    w.reconcile();
    w.startPod('a');
    const r = w.reconcile();
    expect(r.locks?.holding).toEqual([{ holder: `ns/wf/${a.id}`, locks: [DB] }]);
  });

  it("fails the waiting node, not the lock's holder, when the workflow is stopped", () => {
    const w = new World(spec);
    w.reconcile();
    const a = w.node('a');
    grant(w, DB, [`ns/wf/${a.id}`]);
    w.reconcile();
    w.workflow.spec!.shutdown = 'Stop';
    w.reconcile();
    expect(w.node('b')).toMatchObject({ phase: 'Failed', message: 'Stopped with strategy "Stop"' });
  });

  it('renders the mutex name with the inputs, and ends the node in Error for a bad semaphore key', () => {
    const vars = { 'inputs.parameters.db': 'orders' };
    expect(lockSpecsOf({ mutex: { name: 'db-{{inputs.parameters.db}}' } }, 'ns', 'template "t".synchronization', vars)).toEqual({
      ok: true,
      locks: [{ key: 'ns/Mutex/db-orders', field: 'template "t".synchronization.mutex' }],
    });
    const bad = lockSpecsOf({ semaphore: { configMapKeyRef: { name: 'limits', key: 'a/b' } } }, 'ns', 'template "t".synchronization', {});
    expect(bad).toEqual({ ok: false, error: 'template "t".synchronization.semaphore.configMapKeyRef.key: "a/b" is not a ConfigMap key' });
  });

  it('takes a mutex and a semaphore at once: holding one of them is not enough to start', () => {
    const w = new World({
      entrypoint: 'locked',
      templates: [
        {
          ...echo,
          name: 'locked',
          synchronization: { mutexes: [{ name: 'db' }], semaphores: [{ configMapKeyRef: { name: 'limits', key: 'db' } }] },
        },
      ],
    });
    const holder = 'ns/wf/wf';
    grant(w, DB, [holder]);
    grant(w, 'ns/ConfigMap/limits/db', [], ['ns/x/1', 'ns/y/2'], 2);
    const r = w.reconcile();
    expect(r.actions.filter((a) => a.kind === 'createPod')).toEqual([]);
    expect(w.node('wf').message).toBe('Waiting for lock ns/ConfigMap/limits/db (limit 2, held by ns/x/1, ns/y/2)');
    grant(w, 'ns/ConfigMap/limits/db', [holder], [], 2);
    expect(w.reconcile().actions.map((a) => a.kind)).toEqual(['createPod']);
  });
});

describe('lock keys', () => {
  it('parses the keys it writes', () => {
    expect(parseLockKey('ns/Mutex/a/b')).toEqual({ kind: 'mutex', namespace: 'ns', name: 'a/b' });
    expect(parseLockKey('ns/ConfigMap/cm/k')).toEqual({ kind: 'semaphore', namespace: 'ns', configMap: 'cm', key: 'k' });
    expect(parseLockKey('nonsense')).toBeUndefined();
  });

  it('names at most five holders in a message', () => {
    const holders = Array.from({ length: 7 }, (_, i) => `ns/w${i}`);
    expect(waitingMessage('ns/ConfigMap/cm/k', { granted: [], holders, limit: 7 })).toBe(
      'Waiting for lock ns/ConfigMap/cm/k (limit 7, held by ns/w0, ns/w1, ns/w2, ns/w3, ns/w4 and 2 more)',
    );
  });
});
