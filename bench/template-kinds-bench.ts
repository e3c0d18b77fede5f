/**
 * What the new template kinds cost (issue 12), each as a ratio to what a user would write
 * without them, measured in the same run on one control plane with the local pod runner:
 *
 *   - containerSet: three commands one after the other in one pod, vs a steps template running
 *     the same three commands as three pods (the peer's reason for container sets: no pod
 *     start-up between them);
 *   - resource: a step that creates a ConfigMap (the controller's API call, as the step's service
 *     account), vs a container step that does nothing (one pod);
 *   - resource with manifestFrom.artifact: the manifest fetched and printed by a pod of the step's
 *     own, vs a one-pod step (that pod is the cost), small (from the pod's report) and 20 KB
 *     (from the pod's log) side by side;
 *   - data: listing is left out here (it needs an object store; the artifacts bench has one).
 *
 * Time per workflow: create → Succeeded, a client polling every 20 ms; writes: the controller's.
 *
 *   npx tsx bench/template-kinds-bench.ts     (also part of `make bench`)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Template, Workflow } from '../src/api/index.js';
import { ROLE_BINDINGS, ROLES } from '../src/kube/resource.js';
import { startCountedController } from './counted-controller.js';
import { percentile, type Figure } from './figures.js';
import { writeFiguresSection } from './run-all.js';

const wf = (name: string, entrypoint: string, templates: Template[]): Workflow => ({
  apiVersion: 'plugflow.io/v1alpha1',
  kind: 'Workflow',
  metadata: { name },
  spec: { entrypoint, templates },
});

const cmd = (i: number) => ({ image: 'alpine:3', command: ['sh', '-c', `echo step ${i}`] });

const threePods = (name: string) =>
  wf(name, 'main', [
    { name: 'main', steps: [0, 1, 2].map((i) => [{ name: `s${i}`, template: `c${i}` }]) },
    ...[0, 1, 2].map((i) => ({ name: `c${i}`, container: cmd(i) })),
  ]);

const oneSet = (name: string) =>
  wf(name, 'main', [
    {
      name: 'main',
      containerSet: {
        containers: [0, 1, 2].map((i) => ({
          name: i === 2 ? 'main' : `c${i}`,
          ...cmd(i),
          ...(i > 0 ? { dependencies: [i === 1 ? 'c0' : 'c1'] } : {}),
        })),
      },
    },
  ]);

const onePod = (name: string) => wf(name, 'main', [{ name: 'main', container: cmd(0) }]);

const oneResource = (name: string) =>
  wf(name, 'main', [
    {
      name: 'main',
      resource: { action: 'create', manifest: `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata: {a: b}\n` },
    },
  ]);

/** A ConfigMap manifest of about `size` bytes. */
const manifestOf = (name: string, size: number): string =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  text: |\n${'    0123456789abcdefghijklmnopqrstuvwxyz\n'.repeat(Math.ceil(size / 41))}`;

const fromArtifact = (name: string, size: number) =>
  wf(name, 'main', [
    {
      name: 'main',
      inputs: { artifacts: [{ name: 'm', path: '/tmp/m.yaml', raw: { data: manifestOf(name, size) } }] },
      resource: { action: 'create', manifestFrom: { artifact: { name: 'm' } } },
    },
  ]);

export async function runTemplateKindsBench(rounds = 6): Promise<Figure[]> {
  const work = mkdtempSync(join(tmpdir(), 'plugflow-kinds-bench-'));
  const stack = await startCountedController(work, async (client) => {
    // The resource step acts as the workflow's account (default): it may create ConfigMaps.
    await client.create(ROLES, 'default', {
      metadata: { name: 'bench-configmaps' },
      rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['create'] }],
    });
    await client.create(ROLE_BINDINGS, 'default', {
      metadata: { name: 'bench-configmaps' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'bench-configmaps' },
      subjects: [{ kind: 'ServiceAccount', name: 'default', namespace: 'default' }],
    });
  });
  try {
    // Alternating, so a slow moment of the machine hits both sides.
    const steps: number[] = [];
    const sets: number[] = [];
    const pods: number[] = [];
    const resources: number[] = [];
    let stepWrites = 0;
    let setWrites = 0;
    let podWrites = 0;
    let resourceWrites = 0;
    const smallFrom: number[] = [];
    const largeFrom: number[] = [];
    for (let i = 0; i < rounds; i++) {
      const a = await stack.runEach([threePods(`pods-${i}`)]);
      const b = await stack.runEach([oneSet(`set-${i}`)]);
      const c = await stack.runEach([onePod(`pod-${i}`)]);
      const d = await stack.runEach([oneResource(`res-${i}`)]);
      steps.push(...a.ms);
      sets.push(...b.ms);
      pods.push(...c.ms);
      resources.push(...d.ms);
      smallFrom.push(...(await stack.runEach([fromArtifact(`from-small-${i}`, 300)])).ms);
      largeFrom.push(...(await stack.runEach([fromArtifact(`from-large-${i}`, 20_000)])).ms);
      stepWrites += a.writesPerWorkflow / rounds;
      setWrites += b.writesPerWorkflow / rounds;
      podWrites += c.writesPerWorkflow / rounds;
      resourceWrites += d.writesPerWorkflow / rounds;
    }
    const [s50, c50, p50, r50] = [percentile(steps, 50), percentile(sets, 50), percentile(pods, 50), percentile(resources, 50)];
    const [f50, l50] = [percentile(smallFrom, 50), percentile(largeFrom, 50)];
    return [
      {
        name: 'containerSet: 3 commands in one pod, create → Succeeded, p50',
        value: Math.round(c50),
        unit: 'ms',
        goal: 'faster than the same 3 commands as 3 step pods',
        met: c50 < s50,
        note: `${(c50 / s50).toFixed(2)}× the ${s50.toFixed(0)} ms of 3 step pods; controller writes ${setWrites.toFixed(1)} vs ${stepWrites.toFixed(1)}; ${rounds} rounds`,
      },
      {
        name: 'resource: a step creating a ConfigMap, create → Succeeded, p50',
        value: Math.round(r50),
        unit: 'ms',
        goal: 'faster than a one-pod step (no pod)',
        met: r50 < p50,
        note: `${(r50 / p50).toFixed(2)}× the ${p50.toFixed(0)} ms of a one-pod step; controller writes ${resourceWrites.toFixed(1)} vs ${podWrites.toFixed(1)}`,
      },
      {
        name: 'resource with manifestFrom.artifact (300 B, from the pod report), create → Succeeded, p50',
        value: Math.round(f50),
        unit: 'ms',
        goal: '≤ 1.5× a one-pod step (its own pod is the cost)',
        met: f50 <= 1.5 * p50,
        note: `${(f50 / p50).toFixed(2)}× the ${p50.toFixed(0)} ms of a one-pod step; ${(f50 / r50).toFixed(1)}× an inline manifest`,
      },
      {
        name: 'resource with manifestFrom.artifact (20 KB, from the pod log), create → Succeeded, p50',
        value: Math.round(l50),
        unit: 'ms',
        goal: '≤ 1.2× the 300 B one (the log read is small next to the pod)',
        met: l50 <= 1.2 * f50,
        note: `${(l50 / f50).toFixed(2)}× the 300 B manifest`,
      },
    ];
  } finally {
    await stack.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const t0 = Date.now();
  writeFiguresSection(
    'template-kinds',
    'Template kinds (`npx tsx bench/template-kinds-bench.ts`; also part of `make bench`)',
    await runTemplateKindsBench(),
    t0,
  );
}
