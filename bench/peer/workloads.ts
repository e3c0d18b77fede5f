/**
 * The workloads of the side-by-side benches: the same workflows for both engines — pod-less (every
 * node `suspend: {duration: "0"}`), or one container step for the real node — submitted all at
 * once, followed by a watch until every one is Succeeded; and the bare-client baseline that
 * creates and status-patches objects of the same size as fast as the API server takes them.
 */
import { LABEL_COMPLETED, LABEL_PHASE } from '../../src/api/index.js';
import type { KubeClient } from '../../src/kube/client.js';
import { isAlreadyExists } from '../../src/kube/errors.js';
import { NAMESPACES, type ResourceType } from '../../src/kube/resource.js';

export type Shape = '1-node' | 'dag' | 'pod';
export type Group = 'plugflow.io' | 'argoproj.io';

export function workflowType(group: Group): ResourceType {
  return { group, version: 'v1alpha1', plural: 'workflows', kind: 'Workflow', namespaced: true };
}

/**
 * `1-node`: one suspend node. `dag`: a → b1..b8 → z, each a suspend node. `pod`: one container
 * step, `echo hi` in busybox:1.36 (an image the real node has imported: never pulled).
 */
export function workflow(group: Group, shape: Shape, name: string): Record<string, unknown> {
  const node = { suspend: { duration: '0' } };
  const pod = { container: { image: 'busybox:1.36', command: ['echo', 'hi'], imagePullPolicy: 'IfNotPresent' } };
  const templates =
    shape === '1-node'
      ? [{ name: 'main', ...node }]
      : shape === 'pod'
        ? [{ name: 'main', ...pod }]
        : [
            {
              name: 'main',
              dag: {
                tasks: [
                  { name: 'a', template: 'node' },
                  ...Array.from({ length: 8 }, (_, i) => ({ name: `b${i + 1}`, template: 'node', dependencies: ['a'] })),
                  { name: 'z', template: 'node', dependencies: Array.from({ length: 8 }, (_, i) => `b${i + 1}`) },
                ],
              },
            },
            { name: 'node', ...node },
          ];
  return { apiVersion: `${group}/v1alpha1`, kind: 'Workflow', metadata: { name }, spec: { entrypoint: 'main', templates } };
}

export interface RunResult {
  seconds: number;
  succeeded: number;
  failed: number;
  /** A finished workflow's status, for the baseline's objects of the same size. */
  sampleStatus?: unknown;
  /** That workflow's size as the watch sent it: whole, and its metadata.managedFields. */
  sampleBytes?: { whole: number; managedFields: number };
}

/** Creates `n` workflows with `concurrency` requests in flight; resolves when all are created. */
async function createAll(
  client: KubeClient,
  type: ResourceType,
  ns: string,
  n: number,
  body: (i: number) => unknown,
  concurrency = 16,
  after?: (i: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, n) }, async () => {
      while (next < n) {
        const i = next++;
        await client.create(type, ns, body(i));
        if (after) await after(i);
      }
    }),
  );
}

/**
 * Submits `n` workflows at once into a fresh namespace (made here unless it exists) and waits
 * (watch) until every one has finished; the time runs from the first create to the last finish.
 */
export async function runPoint(client: KubeClient, group: Group, shape: Shape, n: number, ns: string, limitMs: number): Promise<RunResult> {
  const type = workflowType(group);
  // The caller may have made it already (with the roles its engine's pods need).
  await client.create(NAMESPACES, undefined, { metadata: { name: ns } }).catch((err: unknown) => {
    if (!isAlreadyExists(err)) throw err;
  });
  const phases = new Map<string, string>();
  let sampleStatus: unknown;
  let sampleBytes: RunResult['sampleBytes'];
  let lastFinish = 0;
  const abort = new AbortController();
  let done!: () => void;
  const allDone = new Promise<void>((r) => (done = r));
  const finished = () => [...phases.values()].filter((p) => p === 'Succeeded' || p === 'Failed' || p === 'Error').length;
  const onObject = (o: Record<string, unknown>) => {
    const name = (o.metadata as { name: string }).name;
    const status = o.status as { phase?: string } | undefined;
    const was = phases.get(name);
    const phase = status?.phase ?? '';
    phases.set(name, phase);
    if (phase !== was && (phase === 'Succeeded' || phase === 'Failed' || phase === 'Error')) {
      lastFinish = performance.now();
      sampleStatus ??= status;
      sampleBytes ??= {
        whole: JSON.stringify(o).length,
        managedFields: JSON.stringify((o.metadata as { managedFields?: unknown }).managedFields ?? []).length,
      };
      if (finished() >= n) done();
    }
  };
  let started!: () => void;
  const watchOpen = new Promise<void>((r) => (started = r));
  const watching = (async () => {
    while (!abort.signal.aborted) {
      const list = await client.list<Record<string, unknown>>(type, { namespace: ns });
      for (const o of list.items) onObject(o);
      if (finished() >= n) return done();
      const rv = (list.metadata as { resourceVersion?: string } | undefined)?.resourceVersion;
      let opened!: () => void;
      const open = new Promise<void>((r) => (opened = r));
      const w = client
        .watch(
          type,
          { namespace: ns, ...(rv ? { resourceVersion: rv } : {}), timeoutSeconds: 300, onOpen: () => opened() },
          (e) => e.type !== 'BOOKMARK' && e.type !== 'ERROR' && onObject(e.object),
          abort.signal,
        )
        .catch(() => {});
      await Promise.race([open, w]);
      started();
      await w;
    }
  })();
  await watchOpen;
  const t0 = performance.now();
  await createAll(client, type, ns, n, (i) => workflow(group, shape, `w-${i}`));
  const timer = setTimeout(() => done(), limitMs);
  await allDone;
  clearTimeout(timer);
  abort.abort();
  await watching.catch(() => {});
  const values = [...phases.values()];
  return {
    seconds: (lastFinish - t0) / 1000,
    succeeded: values.filter((p) => p === 'Succeeded').length,
    failed: values.filter((p) => p === 'Failed' || p === 'Error').length,
    sampleStatus,
    ...(sampleBytes ? { sampleBytes } : {}),
  };
}

/**
 * The API server's own bound: `n` objects like the workflows (same spec), each created and then
 * given a finished workflow's status and phase labels with one patch (the writes plugflow makes
 * per workflow, its Event aside), 32 requests in flight — no controller at all. Objects per minute.
 */
export async function baselinePoint(
  client: KubeClient,
  group: Group,
  shape: Shape,
  n: number,
  ns: string,
  status: unknown,
): Promise<{ seconds: number; perMinute: number }> {
  const type = workflowType(group);
  await client.create(NAMESPACES, undefined, { metadata: { name: ns } });
  const t0 = performance.now();
  await createAll(
    client,
    type,
    ns,
    n,
    (i) => workflow(group, shape, `w-${i}`),
    32,
    async (i) => {
      const labels = { [LABEL_PHASE]: 'Succeeded', [LABEL_COMPLETED]: 'true' };
      await client.mergePatch(type, ns, `w-${i}`, { metadata: { labels }, status });
    },
  );
  const seconds = (performance.now() - t0) / 1000;
  return { seconds, perMinute: n / (seconds / 60) };
}

/** Deletes the namespace and waits (bounded) until it is gone, so its clean-up is not measured. */
export async function dropNamespace(client: KubeClient, ns: string): Promise<void> {
  await client.delete(NAMESPACES, undefined, ns).catch(() => {});
  for (let i = 0; i < 600; i++) {
    try {
      await client.get(NAMESPACES, undefined, ns);
    } catch {
      return;
    }
    await new Promise((r) => setTimeout(r, 500));
  }
}
