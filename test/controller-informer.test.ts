/**
 * The resilient informer against a real API server that this file starts for itself (so it can
 * be restarted and frozen without disturbing other suites): it lists, watches, indexes, resyncs,
 * relists, recovers from an API server restart and restarts a watch that went silent.
 */
import { execFileSync } from 'node:child_process';
import { KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ControlPlane } from '../src/devenv/control-plane.js';
import { KubeClient } from '../src/kube/client.js';
import { Informer } from '../src/kube/informer.js';
import type { KubeObject } from '../src/kube/object-store.js';
import { CONFIGMAPS, NAMESPACES } from '../src/kube/resource.js';

interface ConfigMap extends KubeObject {
  data?: Record<string, string>;
}

async function eventually(check: () => boolean, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The pid of this file's own kube-apiserver (found by its unique certificate directory). */
function apiServerPid(plane: ControlPlane): number {
  const lines = execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' }).split('\n');
  const line = lines.find((l) => l.includes('kube-apiserver') && l.includes(`--cert-dir=${plane.dir}/certs`));
  if (!line) throw new Error('kube-apiserver of this control plane not found');
  return Number(line.trim().split(/\s+/)[0]);
}

describe('informer (own control plane)', () => {
  const plane = new ControlPlane();
  let client: KubeClient;
  const ns = 'informer-test';
  const informers: Informer<ConfigMap>[] = [];

  const cm = (name: string, data: Record<string, string> = {}, labels: Record<string, string> = { app: 'x' }) => ({
    metadata: { name, labels },
    data,
  });

  function newInformer(extra: Partial<ConstructorParameters<typeof Informer<ConfigMap>>[0]> = {}): Informer<ConfigMap> {
    const inf = new Informer<ConfigMap>({
      client,
      type: CONFIGMAPS,
      namespace: ns,
      labelSelector: 'app',
      backoff: { initialMs: 100, maxMs: 1000 },
      ...extra,
    });
    informers.push(inf);
    return inf;
  }

  beforeAll(async () => {
    await plane.start();
    const kc = new KubeConfig();
    kc.loadFromFile(plane.kubeconfigPath);
    client = await KubeClient.fromKubeConfig(kc, { timeoutMs: 5_000 });
    await client.create(NAMESPACES, undefined, { metadata: { name: ns } });
    await client.create(CONFIGMAPS, ns, cm('before-start', { v: '1' }));
  });

  afterAll(async () => {
    await Promise.all(informers.map((i) => i.stop()));
    await client?.close();
    await plane.stop();
  });

  it('lists, then delivers adds, updates and deletes, keeps an index and respects the selector', async () => {
    const inf = newInformer();
    inf.addIndex('by-data', (o) => (o.data?.v ? [o.data.v] : []));
    const seen: string[] = [];
    inf.addHandlers({
      onAdd: (o) => seen.push(`add ${o.metadata!.name}`),
      onUpdate: (a, b) => a !== b && seen.push(`update ${b.metadata!.name} ${b.data?.v}`),
      onDelete: (o) => seen.push(`delete ${o.metadata!.name}`),
    });
    expect(inf.hasSynced()).toBe(false);
    expect(inf.lastSyncAge()).toBe(Infinity);
    inf.start();
    await inf.waitForSync();
    expect(inf.hasSynced()).toBe(true);
    expect(seen).toEqual(['add before-start']);
    expect(inf.byIndex('by-data', '1').map((o) => o.metadata!.name)).toEqual(['before-start']);

    await client.create(CONFIGMAPS, ns, cm('a', { v: '2' }));
    await client.create(CONFIGMAPS, ns, cm('unlabelled', {}, {}));
    await client.mergePatch(CONFIGMAPS, ns, 'a', { data: { v: '3' } });
    await client.delete(CONFIGMAPS, ns, 'a');
    await eventually(() => seen.includes('delete a'), 'delete of a');
    expect(seen).toEqual(['add before-start', 'add a', 'update a 3', 'delete a']);
    expect(inf.get(ns, 'a')).toBeUndefined();
    expect(inf.get(ns, 'unlabelled')).toBeUndefined();
    expect(inf.byIndex('by-data', '3')).toEqual([]);
    expect(inf.lastSyncAge()).toBeLessThan(30_000);
  });

  it('re-delivers the cache on resync', async () => {
    const inf = newInformer({ resyncMs: 200 });
    let resyncs = 0;
    inf.addHandlers({ onUpdate: (a, b) => a === b && resyncs++ });
    inf.start();
    await inf.waitForSync();
    await eventually(() => resyncs >= 2, 'two resyncs');
  });

  it('recovers from an API server restart: watches again (relisting on 410) and misses nothing', async () => {
    const inf = newInformer();
    const names = new Set<string>();
    inf.addHandlers({ onAdd: (o) => names.add(o.metadata!.name!), onDelete: (o) => names.delete(o.metadata!.name!) });
    inf.start();
    await inf.waitForSync();
    await client.create(CONFIGMAPS, ns, cm('pre-restart'));
    await eventually(() => names.has('pre-restart'), 'pre-restart seen');

    await plane.restartApiServer(1500);
    // Changes right after the restart, possibly before the informer's watch is back.
    await client.delete(CONFIGMAPS, ns, 'pre-restart');
    await client.create(CONFIGMAPS, ns, cm('post-restart'));
    await eventually(() => names.has('post-restart') && !names.has('pre-restart'), 'changes after the restart');
    expect(inf.stats.watchErrors + inf.stats.relistsOnGone).toBeGreaterThan(0);
    expect(inf.stats.watches).toBeGreaterThan(1);
    expect([...names].sort()).toEqual(['before-start', 'post-restart']);
  });

  it('restarts a watch that went silent (API server frozen) and catches up', async () => {
    const inf = newInformer({ watchdogMs: 1_500 });
    const names = new Set<string>();
    inf.addHandlers({ onAdd: (o) => names.add(o.metadata!.name!) });
    inf.start();
    await inf.waitForSync();
    const pid = apiServerPid(plane);
    process.kill(pid, 'SIGSTOP');
    try {
      await eventually(() => inf.stats.watchdogRestarts > 0, 'the watchdog fires', 20_000);
      expect(inf.lastSyncAge()).toBeGreaterThan(1_000);
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    await client.create(CONFIGMAPS, ns, cm('after-freeze'));
    await eventually(() => names.has('after-freeze'), 'after-freeze seen');
    expect(inf.lastSyncAge()).toBeLessThan(5_000);
  });
});
