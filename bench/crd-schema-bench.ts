/**
 * `npx tsx bench/crd-schema-bench.ts`: what the Workflow CRD's schema costs the API server per
 * write. The API server validates (and prunes) every create and patch against the CRD's structural
 * schema: 24 KB, nearly all of it `spec` (the shipped `status` is already one open, atomic object:
 * preserve-unknown-fields). Three variants, each under a group of its own on one control plane:
 *
 *   full         plugflow's Workflow CRD as shipped (crds/workflows.plugflow.io.yaml)
 *   full-again   the very same schema under another group: the control, whose distance from
 *                `full` is this machine's run-to-run noise
 *   open         `spec` preserve-unknown-fields too (no schema below the root)
 *
 * Per variant and repeat (variants alternate, their order flips each repeat): N DAG workflows
 * (a → b1..b8 → z) created, then each given a finished status and its phase labels with one merge
 * patch (what plugflow writes per change), 16 requests in flight; the API server's and etcd's CPU
 * (from /proc) over each phase, per request. No controller runs.
 *
 *   SCHEMA_N=400 SCHEMA_REPEATS=3 npx tsx bench/crd-schema-bench.ts
 */
import { KubeConfig } from '@kubernetes/client-node';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { LABEL_COMPLETED, LABEL_PHASE } from '../src/api/index.js';
import { crdDefinitions } from '../src/api/crd/definitions.js';
import { ControlPlane } from '../src/devenv/control-plane.js';
import { REPO_ROOT } from '../src/devenv/dev-stack.js';
import { applyAndWait } from '../src/kube/apply.js';
import { KubeClient } from '../src/kube/client.js';
import { NAMESPACES, type ResourceType } from '../src/kube/resource.js';
import { finishedStatus } from './peer/finished-status.js';
import { planePids } from './peer/api-server-side.js';
import { cpuSeconds } from './peer/controller-process.js';
import { median } from './peer/cells.js';
import { workflow } from './peer/workloads.js';
import { machineDescription, updateResultsSection } from './run-all.js';

type Variant = 'full' | 'full-again' | 'open';
const VARIANTS: Variant[] = ['full', 'full-again', 'open'];
const OPEN = { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };

const n = Number(process.env.SCHEMA_N ?? 400);
const repeats = Number(process.env.SCHEMA_REPEATS ?? 3);

function groupOf(v: Variant): string {
  return `${v}.schema.bench`;
}

/** The Workflow CRD as shipped, renamed into the variant's group, its schema opened as the variant says. */
function crdFor(v: Variant): Record<string, unknown> {
  const crd = structuredClone(crdDefinitions().find((c) => c.spec.names.kind === 'Workflow')!);
  crd.metadata.name = `workflows.${groupOf(v)}`;
  crd.spec.group = groupOf(v);
  const schema = crd.spec.versions[0]!.schema.openAPIV3Schema as { properties: Record<string, unknown> };
  if (v === 'open') schema.properties.spec = OPEN;
  return crd as unknown as Record<string, unknown>;
}

function typeOf(v: Variant): ResourceType {
  return { group: groupOf(v), version: 'v1alpha1', plural: 'workflows', kind: 'Workflow', namespaced: true };
}

interface Sample {
  variant: Variant;
  createMs: number;
  patchMs: number;
  createEtcdMs: number;
  patchEtcdMs: number;
  schemaBytes: number;
}

async function inFlight(count: number, each: (i: number) => Promise<unknown>, concurrency = 16): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, count) }, async () => {
      while (next < count) await each(next++);
    }),
  );
}

async function measure(client: KubeClient, pids: { apiserver: number; etcd: number }, v: Variant, rep: number): Promise<Sample> {
  const type = typeOf(v);
  const ns = `schema-${v}-${rep}`;
  await client.create(NAMESPACES, undefined, { metadata: { name: ns } });
  const cpu = () => ({ api: cpuSeconds(pids.apiserver), etcd: cpuSeconds(pids.etcd) });
  await new Promise((r) => setTimeout(r, 1000));
  const c0 = cpu();
  const created: { name: string; rv: string; uid: string; spec: unknown }[] = [];
  await inFlight(n, async (i) => {
    const body = { ...workflow('plugflow.io', 'dag', `w-${i}`), apiVersion: `${groupOf(v)}/v1alpha1` };
    const o = await client.create<{ metadata: { name: string; resourceVersion: string; uid: string }; spec: unknown }>(type, ns, body);
    created[i] = { name: o.metadata.name, rv: o.metadata.resourceVersion, uid: o.metadata.uid, spec: o.spec };
  });
  const c1 = cpu();
  const now = new Date().toISOString();
  await inFlight(n, async (i) => {
    const w = created[i]!;
    const wf = { metadata: { name: w.name, namespace: ns, uid: w.uid, resourceVersion: w.rv }, spec: w.spec } as never;
    await client.mergePatch(type, ns, w.name, {
      metadata: { resourceVersion: w.rv, labels: { [LABEL_PHASE]: 'Succeeded', [LABEL_COMPLETED]: 'true' } },
      status: finishedStatus(wf, now),
    });
  });
  const c2 = cpu();
  await client.delete(NAMESPACES, undefined, ns).catch(() => {});
  const per = (s: number) => (s * 1000) / n;
  return {
    variant: v,
    createMs: per(c1.api - c0.api),
    patchMs: per(c2.api - c1.api),
    createEtcdMs: per(c1.etcd - c0.etcd),
    patchEtcdMs: per(c2.etcd - c1.etcd),
    schemaBytes: JSON.stringify(crdFor(v)).length,
  };
}

async function main(): Promise<void> {
  const dir = join(REPO_ROOT, '.plugflow', `crd-schema-bench-${Date.now()}`);
  mkdirSync(dir, { recursive: true });
  const plane = new ControlPlane({ dir: join(dir, 'control-plane'), log: (l) => console.log(l) });
  await plane.start();
  const samples: Sample[] = [];
  try {
    const admin = new KubeConfig();
    admin.loadFromFile(plane.kubeconfigPath);
    await applyAndWait(admin, VARIANTS.map(crdFor) as never);
    const client = await KubeClient.fromKubeConfig(admin);
    const pids = planePids(plane);
    // A warm-up round, not counted: the API server's first requests of a kind compile and cache.
    for (const v of VARIANTS) await measure(client, pids, v, 0);
    for (let rep = 1; rep <= repeats; rep++) {
      const order = rep % 2 ? VARIANTS : [...VARIANTS].reverse();
      for (const v of order) {
        const s = await measure(client, pids, v, rep);
        console.log(
          `${v} #${rep}: create ${s.createMs.toFixed(2)} ms, patch ${s.patchMs.toFixed(2)} ms of API server CPU per request (etcd ${s.createEtcdMs.toFixed(2)} / ${s.patchEtcdMs.toFixed(2)})`,
        );
        samples.push(s);
      }
    }
    await client.close();
  } finally {
    await plane.stop();
  }
  const rows = VARIANTS.map((v) => {
    const of = samples.filter((s) => s.variant === v);
    const m = (k: keyof Omit<Sample, 'variant'>) => median(of.map((s) => s[k] as number));
    const spread = (k: 'createMs' | 'patchMs') =>
      `${Math.min(...of.map((s) => s[k])).toFixed(2)}–${Math.max(...of.map((s) => s[k])).toFixed(2)}`;
    return {
      v,
      create: m('createMs'),
      patch: m('patchMs'),
      createEtcd: m('createEtcdMs'),
      patchEtcd: m('patchEtcdMs'),
      bytes: m('schemaBytes'),
      spread,
    };
  });
  const full = rows[0]!;
  const table = [
    '| CRD schema | its size | API server CPU per create | per status patch | vs full (create / patch) | etcd per create / patch |',
    '|---|---|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.v} | ${(r.bytes / 1024).toFixed(1)} KiB | ${r.create.toFixed(2)} ms (${r.spread('createMs')}) | ${r.patch.toFixed(2)} ms (${r.spread('patchMs')}) | ${(r.create / full.create).toFixed(2)}× / ${(r.patch / full.patch).toFixed(2)}× | ${r.createEtcd.toFixed(2)} / ${r.patchEtcd.toFixed(2)} ms |`,
    ),
  ].join('\n');
  console.log(`\n${table}`);
  updateResultsSection(
    'crd-schema',
    'What the Workflow schema costs per write (`npx tsx bench/crd-schema-bench.ts`)',
    `${machineDescription()}; ${n} DAG workflows per run (a → b1..b8 → z), created then given a finished status and phase labels in one merge patch, 16 in flight, no controller; medians of ${repeats} alternating runs (min–max), after a warm-up round. full-again is the same schema as full under another group: a variant differs from full only where it is further from it than full-again is.\n\n${table}`,
  );
  console.log('figures written to bench/RESULTS.md');
}

await main();
