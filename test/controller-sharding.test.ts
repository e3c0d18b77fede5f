/**
 * Active-active controllers (src/controller/sharding.ts) against the real API server, with the
 * local pod runner as the kubelet:
 *
 * - the member Leases: replicas see each other; a clean stop leaves at once, a killed replica is
 *   counted out once its lease expires (by the observer's clock);
 * - three `plugflow controller --sharding` processes share 30 workflows (two-step ones, and some
 *   that take a mutex). The coordinator replica — the one granting locks — is SIGKILLed midway
 *   and a fourth replica joins. Every workflow Succeeds; every step ran in exactly one pod (each
 *   pod name was created once, with one uid); each workflow's steps ran in order; no two mutex
 *   holders ever overlapped; the killed replica's unfinished workflows were taken over, by
 *   another replica's first status write, within 30 s of the kill.
 */
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import type { Template, Workflow } from '../src/api/index.js';
import { ShardMembers } from '../src/controller/shard-members.js';
import { LEASES, PODS, WORKFLOWS } from '../src/kube/resource.js';
import { captureLogger, eventually, spawnControllerProcess, startRunnerBed, workflow, type RunnerBed } from './controller-harness.js';
import { cluster } from './support/cluster.js';

let bed: RunnerBed;

beforeAll(async () => {
  bed = await startRunnerBed('shard');
}, 180_000);

afterAll(async () => {
  await bed?.stop();
});

describe('controller replicas share the work (--sharding)', () => {
  it('sees members come and go through their Leases: a clean stop at once, a killed one after its lease', async () => {
    const { log } = captureLogger();
    const fast = { leaseDurationMs: 2_000, renewDeadlineMs: 1_500, retryPeriodMs: 200 };
    const make = (identity: string) => new ShardMembers({ client: bed.client, namespace: bed.ns, identity, ...fast, log });
    const a = make('member-a');
    const b = make('member-b');
    const c = make('member-c');
    await Promise.all([a.start(), b.start(), c.start()]);
    // Whatever fails below, these members must not outlive the test: the next one's replicas
    // share the namespace, and a live member that reconciles nothing would hold its share.
    onTestFinished(() => Promise.all([a, b, c].map((m) => m.stop())).then(() => undefined));
    await eventually(() => [a, b, c].every((m) => m.ring().members.length === 3), 'all three see three members', 10_000);
    // Every member computes the same owner for a key.
    for (const key of ['ns/one', 'ns/two', 'other/three']) expect(b.ring().ownerOf(key)).toBe(a.ring().ownerOf(key));

    const t0 = Date.now();
    await b.stop(); // clean: its Lease is deleted
    await eventually(() => a.ring().members.join() === 'member-a,member-c', 'the stopped member is gone', 5_000);
    expect(Date.now() - t0).toBeLessThan(fast.leaseDurationMs);

    const t1 = Date.now();
    await c.stop(false); // as if killed: the Lease stays, unrenewed
    await eventually(() => a.ring().members.join() === 'member-a', 'the killed member is counted out', 10_000);
    expect(Date.now() - t1).toBeGreaterThanOrEqual(fast.leaseDurationMs - 300);
    // The survivor removes the expired Lease, so that a replica starting now does not count it live.
    const members = () => bed.client.list(LEASES, { namespace: bed.ns, labelSelector: 'workflows.plugflow.io/controller-member=true' });
    await eventually(async () => ((await members()).items.length === 1 ? true : undefined), 'the expired lease removed', 5_000);
    expect(a.isGone('member-c')).toBe(true);
    await a.stop();
    expect((await members()).items.length).toBe(0);
  }, 60_000);

  it('runs 30 workflows on three replicas while the coordinator is killed and a fourth joins', async () => {
    const { ns, client } = bed;
    const step = (name: string, extra: Partial<Template> = {}): Template => ({
      name,
      ...extra,
      script: { image: 'alpine:3', command: ['sh'], source: `s=$(date +%s%N); sleep 0.3; e=$(date +%s%N); echo "$s $e"` },
    });
    const plain = Array.from({ length: 24 }, (_, i) => `plain-${String(i).padStart(2, '0')}`);
    const locking = Array.from({ length: 6 }, (_, i) => `locking-${i}`);
    const watchStop = new AbortController();
    // Every pod name → the uids it was created with; workflow → status.controller changes.
    const podUids = new Map<string, Set<string>>();
    const owners: { wf: string; controller: string; phase: string; at: number }[] = [];
    // Every change of a workflow seen, and when: after the kill, only a live replica can write.
    const writes: { wf: string; at: number }[] = [];
    const watching = [
      client.watch(
        PODS,
        { namespace: ns },
        (e) => {
          const md = e.object.metadata as { name?: string; uid?: string } | undefined;
          if (e.type !== 'ADDED' || !md?.name || !md.uid) return;
          const uids = podUids.get(md.name) ?? new Set<string>();
          uids.add(md.uid);
          podUids.set(md.name, uids);
        },
        watchStop.signal,
      ),
      client.watch(
        WORKFLOWS,
        { namespace: ns },
        (e) => {
          const wf = e.object as unknown as Workflow;
          if (e.type === 'MODIFIED' && wf.metadata?.name) writes.push({ wf: wf.metadata.name, at: Date.now() });
          const controller = wf.status?.controller;
          if (!controller || !wf.metadata?.name) return;
          const last = owners.findLast((o) => o.wf === wf.metadata!.name);
          if (last?.controller !== controller)
            owners.push({ wf: wf.metadata.name, controller, phase: wf.status?.phase ?? '', at: Date.now() });
        },
        watchStop.signal,
      ),
    ].map((p) => p.catch(() => undefined));

    const replicas = new Map<string, { child: ChildProcess; stderr: () => string }>();
    const startReplica = (identity: string) =>
      replicas.set(
        identity,
        spawnControllerProcess(cluster().kubeconfigPath, ns, {
          args: ['--sharding', '--workers', '4'],
          env: { POD_NAME: identity, PLUGFLOW_NAMESPACE: ns },
        }),
      );
    const logs = () => [...replicas].map(([id, r]) => `--- ${id}\n${r.stderr().slice(-3000)}`).join('\n');
    try {
      for (const id of ['replica-0', 'replica-1', 'replica-2']) startReplica(id);
      await eventually(
        async () =>
          (
            await client.list<{ spec?: { holderIdentity?: string } }>(LEASES, {
              namespace: ns,
              labelSelector: 'workflows.plugflow.io/controller-member=true',
            })
          ).items.filter((l) => l.spec?.holderIdentity?.startsWith('replica-')).length === 3,
        'three member leases',
        90_000,
        250,
      ).catch((err: Error) => {
        throw new Error(`${err.message}\n${logs()}`);
      });
      for (const name of plain)
        await client.create(
          WORKFLOWS,
          ns,
          workflow(name, {
            entrypoint: 'main',
            templates: [
              { name: 'main', steps: [[{ name: 'first', template: 'first' }], [{ name: 'second', template: 'second' }]] },
              step('first'),
              step('second'),
            ],
          }),
        );
      for (const name of locking)
        await client.create(
          WORKFLOWS,
          ns,
          workflow(name, {
            entrypoint: 'main',
            templates: [
              { name: 'main', steps: [[{ name: 'exclusive', template: 'exclusive' }]] },
              step('exclusive', { synchronization: { mutex: { name: 'db' } } }),
            ],
          }),
        );

      // Midway: some finished, the work spread over more than one replica.
      const finished = async () =>
        (await client.list<Workflow>(WORKFLOWS, { namespace: ns })).items.filter((wf) => wf.status?.phase === 'Succeeded');
      await eventually(async () => ((await finished()).length >= 4 ? true : undefined), 'four workflows done', 180_000, 250);
      const coordinator = (await client.get<{ spec: { holderIdentity: string } }>(LEASES, ns, 'plugflow-controller-coordinator')).spec
        .holderIdentity;
      expect([...replicas.keys()]).toContain(coordinator);
      const killedAt = Date.now();
      const victim = replicas.get(coordinator)!.child;
      victim.kill('SIGKILL');
      await new Promise((r) => victim.once('exit', r));
      // Its writes still on their way through the watch are not take-overs.
      const settledAt = Date.now() + 1_000;
      // What the killed replica had not finished: it must be taken over.
      const orphans = (await client.list<Workflow>(WORKFLOWS, { namespace: ns })).items
        .filter((wf) => wf.status?.controller === coordinator && wf.status?.phase !== 'Succeeded')
        .map((wf) => wf.metadata!.name!);
      startReplica('replica-3');

      const all = [...plain, ...locking];
      const done = await eventually(
        async () => {
          const items = (await client.list<Workflow>(WORKFLOWS, { namespace: ns })).items;
          return items.filter((wf) => ['Succeeded', 'Failed', 'Error'].includes(wf.status?.phase ?? '')).length === all.length
            ? items
            : undefined;
        },
        'every workflow finished',
        300_000,
        500,
      ).catch((err: Error) => {
        throw new Error(`${err.message}\n${logs()}`);
      });

      // A workflow that did not succeed is shown with its message and its nodes' (the replicas' logs may be empty).
      const why = done
        .filter((wf) => wf.status?.phase !== 'Succeeded')
        .map(
          (wf) =>
            `${wf.metadata?.name} ${wf.status?.phase}: ${wf.status?.message ?? ''} (controller ${wf.status?.controller ?? '?'})\n` +
            Object.values(wf.status?.nodes ?? {})
              .map((n) => `  ${n.displayName} ${n.type} ${n.phase}: ${n.message ?? ''}`)
              .join('\n'),
        )
        .join('\n');
      expect(done.map((wf) => `${wf.metadata?.name} ${wf.status?.phase}`).sort(), `${why}\n${logs()}`).toEqual(
        all.map((n) => `${n} Succeeded`).sort(),
      );
      // More than one replica wrote statuses.
      expect(new Set(owners.map((o) => o.controller)).size).toBeGreaterThanOrEqual(2);

      // Every step ran in one pod, created once.
      const pods = (await client.list<{ metadata: { name: string; labels?: Record<string, string> } }>(PODS, { namespace: ns })).items;
      const stepPods = pods.filter((p) => p.metadata.labels?.['workflows.plugflow.io/component'] !== 'agent');
      expect(stepPods.length).toBe(plain.length * 2 + locking.length);
      expect([...podUids].filter(([, uids]) => uids.size > 1).map(([name]) => name)).toEqual([]);

      const interval = (wf: Workflow, display: string): [bigint, bigint] => {
        const out = Object.values(wf.status?.nodes ?? {}).find((n) => n.displayName === display)?.outputs?.result ?? '';
        const [s, e] = out.trim().split(' ');
        if (!s || !e) throw new Error(`${wf.metadata?.name} ${display}: no timestamps in ${JSON.stringify(out)}`);
        return [BigInt(s), BigInt(e)];
      };
      // Steps in order: the second started after the first ended.
      for (const wf of done.filter((w) => w.metadata!.name!.startsWith('plain-')))
        expect(interval(wf, 'second')[0] >= interval(wf, 'first')[1], wf.metadata!.name).toBe(true);
      // The mutex held across shards: never two holders at once.
      const held = done.filter((w) => w.metadata!.name!.startsWith('locking-')).map((wf) => interval(wf, 'exclusive'));
      held.sort((x, y) => (x[0] < y[0] ? -1 : 1));
      for (let i = 1; i < held.length; i++) expect(held[i]![0] >= held[i - 1]![1], `mutex holders ${i - 1} and ${i} overlap`).toBe(true);

      // The killed replica's unfinished workflows were taken over within 30 s.
      expect(orphans.length, 'the killed replica had unfinished workflows').toBeGreaterThan(0);
      const takeOvers = orphans.map((name) => {
        // Its first write after the kill (the new owner's; its status.controller says who, unless
        // that write finished it: a finished workflow is not stamped).
        const taken = writes.find((w) => w.wf === name && w.at >= settledAt);
        expect(taken, `${name} taken over`).toBeDefined();
        expect(taken!.at - killedAt, `${name} taken over within 30 s`).toBeLessThan(30_000);
        const by = owners.find((o) => o.wf === name && o.at >= settledAt)?.controller ?? '(finished)';
        return `${name}→${by} ${((taken!.at - killedAt) / 1000).toFixed(1)}s`;
      });
      const writers = new Map<string, number>();
      for (const o of owners) writers.set(o.controller, (writers.get(o.controller) ?? 0) + 1);
      const flips = (wf: string) => owners.filter((o) => o.wf === wf);
      const worst = [...all].sort((x, y) => flips(y).length - flips(x).length)[0]!;
      console.log(
        `[sharding] most writer changes: ${worst}: ${flips(worst)
          .map((o) => `${o.controller}@${((o.at - killedAt) / 1000).toFixed(1)}s/${o.phase}`)
          .join(' ')}`,
      );
      console.log(
        `[sharding] killed the coordinator ${coordinator}; taken over: ${takeOvers.join(', ')}; workflows per writer: ${JSON.stringify(Object.fromEntries(writers))}`,
      );
    } finally {
      watchStop.abort();
      await Promise.all(watching);
      for (const { child } of replicas.values()) if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await Promise.all(
        [...replicas.values()]
          .filter(({ child }) => child.exitCode === null && child.signalCode === null)
          .map(({ child }) => new Promise((r) => child.once('exit', r))),
      );
    }
  }, 600_000);
});
