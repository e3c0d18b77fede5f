/**
 * Controller/engine figures, measured against a real control plane of the bench's own:
 *
 * 1. API writes per workflow, 1-step and 10-step, run by the local pod runner. Counted twice:
 *    by the controller itself (plugflow_controller_api_writes_total) and by the API server
 *    (apiserver_request_total delta for plugflow.io, pods and events), from which the
 *    submission itself and the kubelet's share (pods/status, pods/binding: the runner) are
 *    taken out and shown apart.
 * 2. 500 three-step workflows submitted at once: time until all have finished, and the
 *    controller's peak RSS. The steps' pods are completed by a "hollow node" (as kubemark does)
 *    that reports each pod Running then Succeeded through the API, because 1500 pods of real
 *    local processes (two Node.js executor processes each) would measure the laptop, not the
 *    controller.
 *
 * The controller runs as its own process (`plugflow controller`), so its RSS is its own.
 *   npx tsx bench/engine-bench.ts [--workflows 500] [--steps 3]
 */
import { KubeConfig } from '@kubernetes/client-node';
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { FINAL_WORKFLOW_PHASES, type Workflow } from '../src/api/index.js';
import { ControlPlane, freePort } from '../src/devenv/control-plane.js';
import { KubeClient } from '../src/kube/client.js';
import { NAMESPACES, SERVICE_ACCOUNTS, WORKFLOWS } from '../src/kube/resource.js';
import { createLogger } from '../src/log/logger.js';
import { PodRunner } from '../src/runner/runner.js';
import { printFigures, type Figure } from './figures.js';
import { applyCrds } from '../test/support/apply.js';
import { HollowNode } from './hollow-node.js';

const REPO = resolve(import.meta.dirname, '..');
const arg = (name: string, def: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : def;
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function chain(name: string, steps: number, command: string[]): Workflow {
  return {
    apiVersion: 'plugflow.io/v1alpha1',
    kind: 'Workflow',
    metadata: { name },
    spec: {
      entrypoint: 'main',
      templates: [
        steps === 1
          ? { name: 'main', container: { image: 'alpine:3', command } }
          : { name: 'main', steps: Array.from({ length: steps }, (_, i) => [{ name: `s${i}`, template: 'work' }]) },
        { name: 'work', container: { image: 'alpine:3', command } },
      ],
    },
  } as Workflow;
}

async function waitAll(client: KubeClient, namespace: string, names: string[], timeoutMs: number): Promise<Record<string, number>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const list = await client.list<Workflow>(WORKFLOWS, { namespace });
    const phases: Record<string, number> = {};
    let done = 0;
    for (const wf of list.items) {
      if (!names.includes(wf.metadata.name!)) continue;
      const p = wf.status?.phase ?? '';
      phases[p] = (phases[p] ?? 0) + 1;
      if (FINAL_WORKFLOW_PHASES.includes(p)) done++;
    }
    if (done === names.length) return phases;
    if (Date.now() > deadline) throw new Error(`timed out: ${JSON.stringify(phases)}`);
    await sleep(250);
  }
}

/** apiserver_request_total, summed by `VERB group/resource[/subresource]`. */
async function apiserverCounts(client: KubeClient): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const line of (await client.getText('/metrics')).split('\n')) {
    const m = /^apiserver_request_total\{(.*)\} (\S+)$/.exec(line);
    if (!m) continue;
    const labels = Object.fromEntries([...m[1].matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    const key = `${labels.verb} ${labels.group || 'core'}/${labels.resource}${labels.subresource ? `/${labels.subresource}` : ''}`;
    out.set(key, (out.get(key) ?? 0) + Number(m[2]));
  }
  return out;
}

interface WriteBreakdown {
  controller: number;
  kubelet: number;
  submissions: number;
  detail: string;
}

/** API-server writes between two snapshots, split into controller, kubelet (runner) and the bench's submissions. */
function writesBetween(before: Map<string, number>, after: Map<string, number>, submissions: number): WriteBreakdown {
  let controller = -submissions;
  let kubelet = 0;
  const parts: string[] = [];
  for (const [key, v] of after) {
    const d = v - (before.get(key) ?? 0);
    const [verb, res] = key.split(' ');
    if (d <= 0 || !['POST', 'PUT', 'PATCH', 'DELETE', 'APPLY'].includes(verb)) continue;
    const ours =
      res.startsWith('plugflow.io/') || res.startsWith('core/pods') || res.startsWith('core/events') || res.startsWith('events.k8s.io/');
    if (!ours) continue;
    if (res === 'core/pods/status' || res === 'core/pods/binding') kubelet += d;
    else controller += d;
    parts.push(`${key} ${d}`);
  }
  return { controller, kubelet, submissions, detail: parts.sort().join(', ') };
}

interface ControllerSample {
  writes: number;
  rss: number;
  cpu: number;
  reconciles: number;
  reconcileSeconds: number;
  conflicts: number;
}

/** The controller's own metrics (scraped from its /metrics). */
async function controllerMetrics(port: number): Promise<ControllerSample> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const s: ControllerSample = { writes: 0, rss: 0, cpu: 0, reconciles: 0, reconcileSeconds: 0, conflicts: 0 };
  const value = (line: string) => Number(line.split(' ').pop());
  for (const line of text.split('\n')) {
    if (line.startsWith('plugflow_controller_api_writes_total{')) s.writes += value(line);
    else if (line.startsWith('plugflow_controller_process_resident_memory_bytes ')) s.rss = value(line);
    else if (line.startsWith('plugflow_controller_process_cpu_seconds_total ')) s.cpu = value(line);
    else if (line.startsWith('plugflow_controller_reconcile_duration_seconds_count')) s.reconciles += value(line);
    else if (line.startsWith('plugflow_controller_reconcile_duration_seconds_sum')) s.reconcileSeconds += value(line);
    else if (line.startsWith('plugflow_controller_status_conflicts_total ')) s.conflicts = value(line);
  }
  return s;
}

/** CPU seconds used so far by this control plane's kube-apiserver and etcd (from /proc). */
function controlPlaneCpu(plane: ControlPlane): number {
  let total = 0;
  for (const line of execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' }).split('\n')) {
    if (!line.includes(plane.dir) || !/kube-apiserver|etcd/.test(line)) continue;
    const pid = line.trim().split(/\s+/)[0];
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    total += (Number(stat[11]) + Number(stat[12])) / 100; // utime + stime, in clock ticks (USER_HZ 100)
  }
  return total;
}

export async function runEngineBench(): Promise<Figure[]> {
  const total = arg('workflows', 500);
  const steps = arg('steps', 3);
  const plane = new ControlPlane({ log: (l) => console.log(l) });
  await plane.start();
  const kc = new KubeConfig();
  kc.loadFromFile(plane.kubeconfigPath);
  const client = await KubeClient.fromKubeConfig(kc, { connections: 64 });
  await applyCrds(plane.kubeconfigPath);
  for (const ns of ['bench-real', 'bench-load']) await client.create(NAMESPACES, undefined, { metadata: { name: ns } });
  for (let i = 0; ; i++) {
    if (
      await client.get(SERVICE_ACCOUNTS, 'bench-real', 'default').then(
        () => true,
        () => false,
      )
    )
      break;
    if (i > 300) throw new Error('no default service account');
    await sleep(100);
  }

  const port = await freePort();
  const controller = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      join(REPO, 'src/cli/main.ts'),
      'controller',
      '--kubeconfig',
      plane.kubeconfigPath,
      '--metrics-port',
      String(port),
      '--metrics-auth=none',
      '--workers',
      '8',
    ],
    {
      cwd: REPO,
      stdio: ['ignore', 'ignore', 'inherit'],
      env: { ...process.env, PLUGFLOW_LOG_LEVEL: 'warn' },
    },
  );
  const runner = new PodRunner({
    kubeConfig: kc,
    dir: mkdtempSync(join(tmpdir(), 'plugflow-bench-runner-')),
    nodeName: 'bench-node',
    namespace: 'bench-real',
    log: createLogger('runner', 'warn'),
  });
  const figures: Figure[] = [];
  try {
    await runner.start();
    for (let i = 0; ; i++) {
      const ok = await fetch(`http://127.0.0.1:${port}/readyz`).then(
        (r) => r.status === 200,
        () => false,
      );
      if (ok) break;
      if (i > 600) throw new Error('controller not ready');
      await sleep(100);
    }

    // 1. Writes per workflow, real pods.
    for (const [label, n, count] of [
      ['1-step', 1, 3],
      ['10-step', 10, 1],
    ] as const) {
      const a = await apiserverCounts(client);
      const ca = await controllerMetrics(port);
      for (let i = 0; i < count; i++) {
        const name = `w${n}-${i}`;
        await client.create(WORKFLOWS, 'bench-real', chain(name, n, ['sh', '-c', 'echo hi']));
        const phases = await waitAll(client, 'bench-real', [name], 300_000);
        if (!phases.Succeeded) throw new Error(`${name} did not succeed: ${JSON.stringify(phases)}`);
      }
      await sleep(2_000); // trailing writes (labels, Events)
      const w = writesBetween(a, await apiserverCounts(client), count);
      const own = ((await controllerMetrics(port)).writes - ca.writes) / count;
      const goal = n === 1 ? 10 : 4 * n;
      figures.push({
        name: `controller API writes per ${label} workflow (controller's count)`,
        value: own,
        unit: 'writes',
        goal: `< ${goal}`,
        met: own < goal,
        note: `average of ${count}`,
      });
      figures.push({
        name: `controller API writes per ${label} workflow (API server's count)`,
        value: Number((w.controller / count).toFixed(1)),
        unit: 'writes',
        goal: `< ${goal}`,
        met: w.controller / count < goal,
        note: `kubelet (runner) writes apart: ${(w.kubelet / count).toFixed(1)}/workflow; all plugflow.io/pods/events writes incl. ${count} submission(s): ${w.detail}`,
      });
    }
    await runner.stop(1);

    // 2. Load: `total` workflows of `steps` steps submitted at once, hollow node.
    const hollow = new HollowNode(client, 'bench-load');
    hollow.start();
    const names = Array.from({ length: total }, (_, i) => `load-${i}`);
    const before = await controllerMetrics(port);
    const planeCpuBefore = controlPlaneCpu(plane);
    let peakRss = before.rss;
    const rssBefore = peakRss;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        peakRss = Math.max(peakRss, (await controllerMetrics(port).catch(() => ({ rss: 0 }))).rss);
        await sleep(500);
      }
    })();
    const t0 = performance.now();
    const pending = [...names];
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        for (let name = pending.shift(); name; name = pending.shift())
          await client.create(WORKFLOWS, 'bench-load', chain(name, steps, ['true']));
      }),
    );
    const submitted = (performance.now() - t0) / 1000;
    const phases = await waitAll(client, 'bench-load', names, 1_800_000);
    const elapsed = (performance.now() - t0) / 1000;
    sampling = false;
    await sampler;
    await hollow.stop();
    const after = await controllerMetrics(port);
    const planeCpu = controlPlaneCpu(plane) - planeCpuBefore;
    const mib = (b: number) => Math.round(b / 2 ** 20);
    figures.push({
      name: `${total} ${steps}-step workflows submitted at once: time until all finished`,
      value: Number(elapsed.toFixed(1)),
      unit: 's',
      goal: '< 120 s',
      met: elapsed < 120 && phases.Succeeded === total,
      note: `${(total / elapsed).toFixed(1)} workflows/s, ${((total * steps) / elapsed).toFixed(1)} pods/s; submission took ${submitted.toFixed(1)} s; phases ${JSON.stringify(phases)}; pods completed by a hollow node`,
    });
    const reconciles = after.reconciles - before.reconciles;
    figures.push({
      name: 'controller CPU time for the load',
      value: Number((after.cpu - before.cpu).toFixed(1)),
      unit: 's',
      goal: 'informational',
      met: true,
      note: `API server + etcd used ${planeCpu.toFixed(1)} s CPU; ${reconciles} reconciles, mean ${((1000 * (after.reconcileSeconds - before.reconcileSeconds)) / Math.max(1, reconciles)).toFixed(1)} ms; ${(after.writes - before.writes) / total} controller writes/workflow; ${after.conflicts - before.conflicts} status conflicts`,
    });
    figures.push({
      name: 'controller peak RSS during the load',
      value: mib(peakRss),
      unit: 'MiB',
      goal: '< 512 MiB (the Deployment limit)',
      met: peakRss < 512 * 2 ** 20,
      note: `${mib(rssBefore)} MiB before the load`,
    });
  } finally {
    await runner.stop(1).catch(() => {});
    controller.kill('SIGTERM');
    await new Promise((r) => controller.once('exit', r));
    await client.close();
    await plane.stop();
  }
  return figures;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  printFigures('engine / controller', await runEngineBench());
}
