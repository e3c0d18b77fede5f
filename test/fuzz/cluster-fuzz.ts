/**
 * Fuzz of what users apply to the cluster: malformed workflows, WorkflowTemplates, event
 * bindings and plugin ConfigMaps, created straight through the API (admin), so that whatever the
 * API server's schema lets through reaches the controller and the server.
 *
 * - The API server may refuse an object (422 and the like, with its message): rejected.
 * - A stored workflow must be looked at by the controller within a minute: it gets a phase, and
 *   Failed/Error carry a message. (No pod runner serves the fuzz namespace, so stored workflows
 *   whose pods would run simply wait: the fuzz tests handling, not running.)
 * - Bindings: after the hostile ones are stored, hostile events are sent through them, then a
 *   canary event must still produce its workflow through the valid canary binding.
 * - Plugin ConfigMaps: each malformed one must be logged by the controller as ignored with a
 *   reason; the valid plugin of the namespace must still be in an agent pod built afterwards.
 * - Neither process may die (checked by the caller).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import type { Workflow } from '../../src/api/index.js';
import type { KubeClient } from '../../src/kube/client.js';
import { ApiError } from '../../src/kube/errors.js';
import { parseManifests } from '../../src/kube/apply.js';
import { CONFIGMAPS, PODS, WORKFLOW_TEMPLATES, WORKFLOWS, type ResourceType } from '../../src/kube/resource.js';
import { agentPodName } from '../../src/pods/agent-pod.js';
import { REPO_ROOT } from '../../src/runner/shim.js';
import { sleep } from '../soak/component.js';
import { sendEvent } from '../soak/http.js';
import { soakPluginConfigMaps } from '../soak/plugin-configmaps.js';
import { INSTANT } from '../soak/plugins/instant.js';
import type { Prng } from '../soak/prng.js';
import { jsonValue, mutate } from './generators.js';
import { hostileBindingSpecs, hostileSidecars, hostileWorkflowSpecs } from './hostile-objects.js';
import { namesProblem, type Tally } from './tally.js';
import { errorMessage } from '../../src/log/error-message.js';

export const BINDINGS: ResourceType = {
  group: 'plugflow.io',
  version: 'v1alpha1',
  plural: 'workfloweventbindings',
  kind: 'WorkflowEventBinding',
  namespaced: true,
};

export interface ClusterFuzzTarget {
  client: KubeClient;
  namespace: string;
  serverUrl: string;
  token: string;
  /** The controller's log text so far (all incarnations). */
  controllerLog: () => string;
  /** The controller's /metrics (its /healthz beside it), read with `token`. */
  controllerMetricsUrl?: string;
  /** Whether the controller process is running now. */
  controllerAlive?: () => boolean;
}

const FINAL = new Set(['Failed', 'Error', 'Succeeded']);

function exampleWorkflows(): Workflow[] {
  const dir = join(REPO_ROOT, 'examples', 'workflows');
  return readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .flatMap((f) => parseManifests(readFileSync(join(dir, f), 'utf8'), f) as unknown as Workflow[]);
}

/** Creates an object; true when stored, false when the API server refused it (counted as rejected). */
async function create(
  tally: Tally,
  target: string,
  client: KubeClient,
  type: ResourceType,
  ns: string,
  body: unknown,
  label: string,
): Promise<boolean> {
  const t = tally.of(target);
  t.tried++;
  try {
    await client.create(type, ns, body);
    t.accepted++;
    return true;
  } catch (err) {
    if (err instanceof ApiError && err.code >= 400 && err.code < 500 && err.message.length >= 8) {
      t.rejected++;
      return false;
    }
    tally.fail(target, `${label}: the API server answered ${err instanceof ApiError ? err.code : ''} ${errorMessage(err).slice(0, 200)}`);
    return false;
  }
}

function named<T extends object>(value: unknown, name: string, kind: string): T {
  const v = (value && typeof value === 'object' && !Array.isArray(value) ? value : { spec: value }) as Record<string, unknown>;
  const meta = v.metadata && typeof v.metadata === 'object' && !Array.isArray(v.metadata) ? (v.metadata as Record<string, unknown>) : {};
  return {
    ...v,
    apiVersion: 'plugflow.io/v1alpha1',
    kind,
    metadata: { ...meta, name, namespace: undefined, generateName: undefined },
  } as T;
}

export async function fuzzCluster(rng: Prng, t: ClusterFuzzTarget, tally: Tally, per: number, log: (l: string) => void): Promise<void> {
  const { client, namespace: ns } = t;

  // WorkflowTemplates first: some hostile workflows refer to fz-t-0 and fz-t-1.
  const template = parseManifests(
    readFileSync(join(REPO_ROOT, 'examples', 'events', 'workflow-template.yaml'), 'utf8'),
  )[0] as unknown as Record<string, unknown>;
  for (let i = 0; i < Math.ceil(per / 2); i++) {
    const m = mutate(rng, template, rng.int(1, 3));
    await create(
      tally,
      'cluster: WorkflowTemplates',
      client,
      WORKFLOW_TEMPLATES,
      ns,
      named(m.value, `fz-t-${i}`, 'WorkflowTemplate'),
      m.changes.join('; '),
    );
  }

  // Workflows: hand-written hostile specs, then random mutations of the examples.
  const stored: { name: string; label: string }[] = [];
  for (const [i, h] of hostileWorkflowSpecs().entries()) {
    const name = `fz-h-${i}`;
    if (
      await create(
        tally,
        'cluster: workflows (hostile)',
        client,
        WORKFLOWS,
        ns,
        { apiVersion: 'plugflow.io/v1alpha1', kind: 'Workflow', metadata: { name }, spec: h.spec },
        h.label,
      )
    )
      stored.push({ name, label: h.label });
  }
  const examples = exampleWorkflows();
  for (let i = 0; i < per; i++) {
    const base = rng.pick(examples);
    const m = mutate(rng, base, rng.int(1, 4));
    const name = `fz-w-${i}`;
    if (await create(tally, 'cluster: workflows (mutated)', client, WORKFLOWS, ns, named(m.value, name, 'Workflow'), m.changes.join('; ')))
      stored.push({ name, label: m.changes.join('; ') });
  }
  log(`  cluster: ${stored.length} workflows stored; waiting for the controller to look at each`);

  // Bindings: hostile specs and mutations of the example, then events through them.
  const binding = parseManifests(readFileSync(join(REPO_ROOT, 'examples', 'events', 'binding.yaml'), 'utf8'))[0] as unknown as Record<
    string,
    unknown
  >;
  for (const [i, h] of hostileBindingSpecs().entries()) {
    await create(
      tally,
      'cluster: event bindings',
      client,
      BINDINGS,
      ns,
      { apiVersion: 'plugflow.io/v1alpha1', kind: 'WorkflowEventBinding', metadata: { name: `fz-hb-${i}` }, spec: h.spec },
      h.label,
    );
  }
  for (let i = 0; i < Math.ceil(per / 2); i++) {
    const m = mutate(rng, binding, rng.int(1, 3));
    await create(
      tally,
      'cluster: event bindings',
      client,
      BINDINGS,
      ns,
      named(m.value, `fz-b-${i}`, 'WorkflowEventBinding'),
      m.changes.join('; '),
    );
  }
  await sleep(2000); // the server's binding cache follows by watch
  const events = tally.of('cluster: events through hostile bindings');
  for (let i = 0; i < Math.ceil(per / 2); i++) {
    events.tried++;
    const a = await sendEvent(t.serverUrl, t.token, ns, '', JSON.stringify(jsonValue(rng, 4)));
    if (a.status === 200) events.accepted++;
    else if (a.status === 503 || (a.status >= 400 && a.status < 500 && namesProblem(a.text))) events.rejected++;
    else tally.fail(events.target, `event ${i}: answered ${a.status || a.error}: ${a.text.slice(0, 200)}`);
  }
  await canaryEvent(t, tally, 'after hostile bindings');

  // Plugin ConfigMaps: hostile sidecars and mutations of a valid one, beside a valid plugin.
  const valid = soakPluginConfigMaps(ns, 17_300)[0]!;
  const bad: string[] = [];
  for (const [i, h] of hostileSidecars().entries()) {
    const name = `fz-hp-${i}-executor-plugin`;
    if (
      await create(
        tally,
        'cluster: plugin ConfigMaps',
        client,
        CONFIGMAPS,
        ns,
        { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels: valid.metadata.labels }, data: h.data },
        h.label,
      )
    )
      bad.push(name);
  }
  for (let i = 0; i < Math.ceil(per / 4); i++) {
    // Each mutant starts from a plugin on a port of its own: a mutant that is still valid is a
    // second plugin, and must not clash with the valid one's port (a clash refuses agent pods).
    const base = soakPluginConfigMaps(ns, 17_400 + 3 * i)[0]!;
    base.data['sidecar.container'] = base.data['sidecar.container']!.replace(/^name: .*$/m, `name: fz-p-${i}`);
    const m = mutate(rng, { data: base.data }, rng.int(1, 3));
    const data = (m.value as { data?: unknown }).data;
    const strings =
      data && typeof data === 'object' && !Array.isArray(data)
        ? Object.fromEntries(Object.entries(data).map(([k, v]) => [k, typeof v === 'string' ? v : (JSON.stringify(v) ?? '')]))
        : {};
    const name = `fz-p-${i}-executor-plugin`;
    await create(
      tally,
      'cluster: plugin ConfigMaps',
      client,
      CONFIGMAPS,
      ns,
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels: valid.metadata.labels }, data: strings },
      `${m.changes.join('; ')}`,
    );
  }
  await sleep(3000);
  const logText = t.controllerLog();
  const ignored = new Map<string, string>();
  for (const line of logText.split('\n')) {
    if (!line.includes('malformed and ignored')) continue;
    try {
      const entry = JSON.parse(line) as { name?: string; reason?: unknown };
      if (entry.name) ignored.set(entry.name, typeof entry.reason === 'string' ? entry.reason : '');
    } catch {
      // not a JSON log line
    }
  }
  for (const name of bad) {
    const reason = ignored.get(name);
    if (reason === undefined) tally.fail('cluster: plugin ConfigMaps', `${name}: the controller did not log it as malformed and ignored`);
    else if (reason.trim().length < 8) tally.fail('cluster: plugin ConfigMaps', `${name}: ignored without a reason`);
  }
  await pluginStillLoaded(t, tally, 'after malformed plugin ConfigMaps');
  // A well-formed plugin added later whose container name clashes with the installed one.
  const clash = soakPluginConfigMaps(ns, 17_390)[0]!;
  await create(
    tally,
    'cluster: plugin ConfigMaps',
    client,
    CONFIGMAPS,
    ns,
    { ...clash, metadata: { ...clash.metadata, name: 'fz-clash-executor-plugin' } },
    'a second plugin with the container name of an installed one',
  );
  await sleep(2000);
  await pluginStillLoaded(t, tally, 'after a second plugin with a clashing container name was added');

  // Every stored workflow must have been looked at by the controller.
  const deadline = Date.now() + 90_000;
  let pending = stored;
  while (pending.length && Date.now() < deadline) {
    const list = (await client.list<Workflow>(WORKFLOWS, { namespace: ns })).items;
    const byName = new Map(list.map((w) => [w.metadata.name!, w]));
    pending = pending.filter((s) => !byName.get(s.name)?.status?.phase);
    if (pending.length) await sleep(2000);
  }
  for (const s of pending)
    tally.fail(
      s.name.startsWith('fz-h-') ? 'cluster: workflows (hostile)' : 'cluster: workflows (mutated)',
      `${s.name} (${s.label}): no phase after 90 s — the controller never decided on it`,
    );
  const list = (await client.list<Workflow>(WORKFLOWS, { namespace: ns })).items;
  for (const w of list) {
    const s = stored.find((x) => x.name === w.metadata.name);
    if (!s) continue;
    const phase = w.status?.phase;
    if (phase && FINAL.has(phase) && phase !== 'Succeeded' && !(w.status?.message && w.status.message.length >= 8)) {
      tally.fail(
        s.name.startsWith('fz-h-') ? 'cluster: workflows (hostile)' : 'cluster: workflows (mutated)',
        `${s.name} (${s.label}): ${phase} without a message naming the problem`,
      );
    }
  }
  const outcome = (label: string) => list.find((w) => w.metadata.name === stored.find((s) => s.label === label)?.name);
  log(
    `  cluster: hostile workflow outcomes: ${hostileWorkflowSpecs()
      .map((h) => `${h.label} → ${outcome(h.label)?.status?.phase ?? 'refused'}`)
      .join('; ')}`,
  );
}

/** A valid event through the valid canary binding must still create exactly one workflow. */
export async function canaryEvent(t: ClusterFuzzTarget, tally: Tally, when: string): Promise<void> {
  const target = 'canaries (nothing accepted is lost)';
  const c = tally.of(target);
  c.tried++;
  const id = `c${Date.now().toString(36)}`;
  // 503 means "queue full, retry later" (the contract): a sender retries; a minute of it is a failure.
  let a = await sendEvent(t.serverUrl, t.token, t.namespace, '', JSON.stringify({ canary: true, id }));
  const started = Date.now();
  while (a.status === 503 && Date.now() - started < 60_000) {
    await sleep(1000);
    a = await sendEvent(t.serverUrl, t.token, t.namespace, '', JSON.stringify({ canary: true, id }));
  }
  if (a.status !== 200)
    return tally.fail(
      target,
      `canary event ${when}: answered ${a.status || a.error}${a.status === 503 ? ' for 60 s (the event queue stayed full)' : ''}`,
    );
  if (Date.now() - started > 2000)
    tally.warn(
      target,
      `canary event ${when}: the event queue was full for ${((Date.now() - started) / 1000).toFixed(0)} s before it was accepted`,
    );
  for (let i = 0; i < 60; i++) {
    const found = (await t.client.list<Workflow>(WORKFLOWS, { namespace: t.namespace, labelSelector: `fuzz.plugflow.io/canary=${id}` }))
      .items;
    if (found.length === 1) return void c.accepted++;
    if (found.length > 1) return tally.fail(target, `canary event ${when} produced ${found.length} workflows`);
    await sleep(500);
  }
  tally.fail(target, `canary event ${when} (accepted) produced no workflow within 30 s`);
}

/** A plugin workflow stored now must get an agent pod that carries the valid plugin's sidecar. */
async function pluginStillLoaded(t: ClusterFuzzTarget, tally: Tally, when: string): Promise<void> {
  const target = 'canaries (nothing accepted is lost)';
  tally.of(target).tried++;
  const name = `fz-plugin-canary-${Date.now().toString(36)}`;
  await t.client.create(WORKFLOWS, t.namespace, {
    apiVersion: 'plugflow.io/v1alpha1',
    kind: 'Workflow',
    metadata: { name },
    spec: { entrypoint: 'main', templates: [{ name: 'main', plugin: { [INSTANT]: {} } }] },
  });
  for (let i = 0; i < 60; i++) {
    try {
      const pod = await t.client.get<V1Pod>(PODS, t.namespace, agentPodName(name));
      const names = (pod.spec?.containers ?? []).map((c) => c.name);
      if (names.includes(INSTANT)) return void tally.of(target).accepted++;
      return tally.fail(
        target,
        `${when}: the agent pod of ${name} has containers ${names.join(', ')}: the installed plugin ${INSTANT} is missing`,
      );
    } catch {
      const wf = await t.client.get<Workflow>(WORKFLOWS, t.namespace, name).catch(() => undefined);
      if (wf?.status?.phase === 'Error' || wf?.status?.phase === 'Failed') {
        return tally.fail(
          target,
          `${when}: the plugin canary ${name} ended ${wf.status.phase} without an agent pod: ${wf.status.message ?? ''}`,
        );
      }
      await sleep(500);
    }
  }
  tally.fail(target, `${when}: no agent pod for the plugin canary ${name} within 30 s`);
}
