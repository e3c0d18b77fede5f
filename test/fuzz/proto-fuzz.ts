/**
 * Fuzz of the two classes of issue 10 items 1–2, everywhere user JSON enters or is rendered:
 *
 * - prototype keys: documents with `__proto__`, `constructor` and `prototype` keys (nested, in
 *   lists, written as JSON — also with `\u005f` escapes — and as YAML), fed (a) in process to
 *   every entry point (podSpecPatch parse/merge/render, pod builder, plugin replies, bindings and
 *   event payloads, the workflow shape check, engine validation and reconcile, withParam, the
 *   status merge patch), and (b) to the real server and controller (REST bodies, events, objects
 *   stored straight in the API server). Invariant: Object.prototype and Array.prototype are
 *   untouched in this process, and a clean workflow built afterwards gets a clean pod from the
 *   controller (so nothing leaked in the controller process either);
 * - metacharacter values: parameter and event payload values full of `"`, `}`, `]`, newlines,
 *   `: `, `{{`, `---`, rendered into workflow- and template-level podSpecPatch (JSON and YAML
 *   forms). Invariant: the pod spec's structure never changes; the value arrives as exactly one
 *   string leaf.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { stringify } from 'yaml';
import {
  LABEL_WORKFLOW,
  parseUserJson,
  setOwn,
  UnsafeJsonError,
  type Workflow,
  type WorkflowEventBinding,
  type WorkflowSpec,
} from '../../src/api/index.js';
import { classifyReply } from '../../src/agent/plugin-client.js';
import { checkReply } from '../../src/agent/reply-validation.js';
import { expandLoop } from '../../src/engine/loop-items.js';
import { renderStructuredText } from '../../src/engine/structured-render.js';
import { World } from '../../src/engine/test-world.js';
import { validateWorkflow } from '../../src/engine/validate.js';
import { eventEnvironment } from '../../src/expr/index.js';
import { applyMergePatch, mergePatchDiff } from '../../src/kube/merge-patch.js';
import { PODS, WORKFLOW_TEMPLATES, WORKFLOWS } from '../../src/kube/resource.js';
import { buildStepPod } from '../../src/pods/build-pod.js';
import { compileBinding, evaluateSubmission, matches } from '../../src/server/binding-compile.js';
import { workflowShapeProblems } from '../../src/api/crd/workflow-shape.js';
import { sleep } from '../soak/component.js';
import { call, sendEvent } from '../soak/http.js';
import type { Prng } from '../soak/prng.js';
import { BINDINGS, type ClusterFuzzTarget } from './cluster-fuzz.js';
import { namesProblem, type Tally } from './tally.js';
import { errorMessage } from '../../src/log/error-message.js';

const MARK = 'pfFuzzPolluted';
const PRIVILEGED = JSON.stringify({
  hostPID: true,
  volumes: [{ name: 'h', hostPath: { path: '/' } }],
  containers: [{ name: 'main', securityContext: { privileged: true } }],
});
const UNSAFE_KEYS = ['__proto__', 'constructor', 'prototype'] as const;
const PURE = 'prototype keys: in-process entry points';
const SYSTEM = 'prototype keys: server and controller';
const META = 'metacharacter values: rendered podSpecPatch';

/** A payload that would make later objects privileged if it ever reached a prototype. */
const payload = () =>
  Object.fromEntries([
    [MARK, true],
    ['podSpecPatch', PRIVILEGED],
    ['hostPID', true],
    ['privileged', true],
  ]);

/** A JSON object with hostile keys at random places (built with setOwn: `__proto__` stays data). */
function hostileDoc(rng: Prng): { value: Record<string, unknown>; label: string } {
  const keys: string[] = [];
  const node = (depth: number): unknown => {
    const o: Record<string, unknown> = {};
    for (let i = rng.int(1, 3); i > 0; i--) {
      const roll = rng.int(0, 5);
      if (roll <= 1) {
        const k = rng.pick(UNSAFE_KEYS);
        keys.push(k);
        setOwn(o, k, k === 'constructor' && rng.chance(0.6) ? Object.fromEntries([['prototype', payload()]]) : payload());
      } else if (roll === 2 && depth > 0)
        setOwn(o, rng.pick(['containers', 'volumes', 'tolerations', 'list']), [node(depth - 1), node(depth - 1)]);
      else if (depth > 0) setOwn(o, rng.pick(['securityContext', 'spec', 'a', 'nodeSelector']), node(depth - 1));
      else setOwn(o, rng.pick(['name', 'image', 'x']), 'main');
    }
    return o;
  };
  let value = node(rng.int(0, 3)) as Record<string, unknown>;
  if (keys.length === 0) {
    value = { ...value };
    setOwn(value, '__proto__', payload());
    keys.push('__proto__');
  }
  return { value, label: `keys ${keys.join(',')}` };
}

/** The document as JSON, JSON with escaped key characters, block YAML or flow YAML. */
function asText(rng: Prng, value: unknown): { text: string; form: string } {
  const json = JSON.stringify(value);
  switch (rng.int(0, 3)) {
    case 0:
      return { text: json, form: 'JSON' };
    case 1:
      return {
        text: json.replaceAll('"__proto__"', '"\\u005f_proto__"').replaceAll('"constructor"', '"\\u0063onstructor"'),
        form: 'JSON with escapes',
      };
    case 2:
      return { text: stringify(value), form: 'YAML' };
    default:
      return { text: stringify(value, { collectionStyle: 'flow' }), form: 'flow YAML' };
  }
}

const protoSnapshot = () =>
  [Object.getOwnPropertyNames(Object.prototype).sort().join(','), Object.getOwnPropertyNames(Array.prototype).sort().join(',')].join('|');

const wf = (spec: WorkflowSpec, name = 'wf'): Workflow => ({
  apiVersion: 'plugflow.io/v1alpha1',
  kind: 'Workflow',
  metadata: { name, namespace: 'ns', uid: `u-${name}` },
  spec,
});
const container = { image: 'busybox', command: ['true'] };
const cleanPod = () =>
  buildStepPod({
    workflow: wf({ templates: [] }, 'clean'),
    nodeId: 'n',
    podName: 'p',
    template: { name: 'main', container },
    executorImage: 'x',
  });

/** Runs `fn`; an error is fine when its message says something (the entry point refused). */
function attempt(fn: () => unknown): void {
  try {
    fn();
  } catch (err) {
    if (!(err instanceof Error) || err.message.length < 8) throw new Error(`a refusal that names nothing: ${String(err)}`);
  }
}

/** (a) Every in-process entry point, `per` documents each. */
export function fuzzPrototypeKeysInProcess(rng: Prng, tally: Tally, per: number): void {
  const t = tally.of(PURE);
  const before = protoSnapshot();
  const reference = JSON.stringify(cleanPod());
  for (let i = 0; i < per; i++) {
    const doc = hostileDoc(rng);
    const { text, form } = asText(rng, doc.value);
    const label = `${doc.label} as ${form}: ${text.slice(0, 160)}`;
    t.tried++;
    try {
      const inline = JSON.parse(JSON.stringify(doc.value)) as Record<string, unknown>;
      attempt(() =>
        buildStepPod({
          workflow: wf({ templates: [], podSpecPatch: text }),
          workflowPodSpecPatch: text,
          nodeId: 'n',
          podName: 'p',
          template: { name: 't', container, podSpecPatch: text },
          executorImage: 'x',
        }),
      );
      attempt(() => renderStructuredText(`${text}\n`.replace(/main/, '{{v}}'), 'f', (s) => s.replace('{{v}}', 'main')));
      attempt(() => parseUserJson(JSON.stringify(doc.value), 'body'));
      const reply = classifyReply(
        'fz',
        200,
        JSON.stringify({ node: { phase: 'Succeeded', outputs: { artifacts: [{ name: 'a', s3: inline }] }, ...inline } }),
      );
      if (reply.kind === 'reply') checkReply('fz', reply.reply);
      const b = compileBinding({
        metadata: { name: 'b', namespace: 'ns', uid: 'u' },
        spec: {
          event: { selector: 'payload.constructor != nil || true' },
          submit: {
            workflowTemplateRef: { name: 't' },
            arguments: {
              parameters: [
                { name: 'p', valueFrom: { event: 'payload' } },
                { name: 'q', value: inline },
              ],
            },
          },
        },
      } as unknown as WorkflowEventBinding);
      let event: unknown;
      try {
        event = parseUserJson(JSON.stringify(doc.value), 'the event body');
      } catch (err) {
        if (!(err instanceof UnsafeJsonError)) throw err;
      }
      if (event !== undefined && b.problems.length === 0)
        attempt(() => matches(b, eventEnvironment({ payload: event })) && evaluateSubmission(b, eventEnvironment({ payload: event })));
      const spec = { entrypoint: 'main', templates: [{ name: 'main', plugin: { fz: inline } }] } as unknown as WorkflowSpec;
      workflowShapeProblems(wf(spec));
      validateWorkflow(wf(spec));
      attempt(() => new World(spec).reconcile());
      attempt(() =>
        new World({ entrypoint: 'main', podSpecPatch: text, templates: [{ name: 'main', container, podSpecPatch: text }] }).reconcile(),
      );
      attempt(() => expandLoop({ withParam: JSON.stringify([doc.value]) }));
      applyMergePatch({}, inline);
      mergePatchDiff({ a: 1 }, inline);
    } catch (err) {
      tally.fail(PURE, `${label}: ${errorMessage(err).slice(0, 200)}`);
    }
    const now = protoSnapshot();
    if (now !== before || ({} as Record<string, unknown>)[MARK] !== undefined) {
      const added = [...Object.getOwnPropertyNames(Object.prototype), ...Object.getOwnPropertyNames(Array.prototype)].filter(
        (k) => !before.split(/[|,]/).includes(k),
      );
      tally.fail(PURE, `${label}: a prototype changed (new keys: ${added.join(', ')})`);
      for (const k of Object.getOwnPropertyNames(Object.prototype))
        if (!before.includes(k)) delete (Object.prototype as Record<string, unknown>)[k];
      continue;
    }
    if (JSON.stringify(cleanPod()) !== reference)
      tally.fail(PURE, `${label}: a clean pod built afterwards differs from the one built before`);
    else t.accepted++;
  }
}

/** Waits for the controller to create the first pod of workflow `name`. */
async function podOf(c: ClusterFuzzTarget, name: string, seconds = 60): Promise<V1Pod | undefined> {
  for (let i = 0; i < seconds; i++) {
    const pods = await c.client
      .list<V1Pod>(PODS, { namespace: c.namespace, labelSelector: `${LABEL_WORKFLOW}=${name}` })
      .catch(() => undefined);
    if (pods?.items.length) return pods.items[0];
    const phase = (await c.client.get<Workflow>(WORKFLOWS, c.namespace, name).catch(() => undefined))?.status?.phase;
    if (phase === 'Failed' || phase === 'Error') return undefined;
    await sleep(1000);
  }
  return undefined;
}

/** What must never appear in a pod of a workflow that did not ask for it. */
function podProblems(pod: V1Pod): string[] {
  const out: string[] = [];
  const s = pod.spec!;
  if (s.hostPID || s.hostNetwork || s.hostIPC) out.push('host namespaces');
  if (s.volumes?.some((v) => v.hostPath)) out.push('a hostPath volume');
  if ([...s.containers, ...(s.initContainers ?? [])].some((c) => c.securityContext?.privileged)) out.push('a privileged container');
  if (JSON.stringify(pod).includes(MARK)) out.push(`the marker ${MARK}`);
  return out;
}

async function cleanProbe(c: ClusterFuzzTarget, tally: Tally, name: string): Promise<void> {
  const t = tally.of(SYSTEM);
  t.tried++;
  await c.client.create(WORKFLOWS, c.namespace, {
    apiVersion: 'plugflow.io/v1alpha1',
    kind: 'Workflow',
    metadata: { name },
    spec: { entrypoint: 'main', templates: [{ name: 'main', container }] },
  });
  const pod = await podOf(c, name);
  if (!pod) return tally.fail(SYSTEM, `clean probe ${name}: the controller made no pod within 60 s`);
  const problems = podProblems(pod);
  if (problems.length)
    tally.fail(SYSTEM, `clean probe ${name} after hostile input got ${problems.join(', ')}: the controller process was polluted`);
  else t.accepted++;
}

/** (b) The real server and controller: REST bodies, events, objects stored in the API server. */
export async function fuzzPrototypeKeysInSystem(rng: Prng, c: ClusterFuzzTarget, tally: Tally, per: number): Promise<void> {
  const t = tally.of(SYSTEM);
  await c.client.create(BINDINGS, c.namespace, {
    apiVersion: 'plugflow.io/v1alpha1',
    kind: 'WorkflowEventBinding',
    metadata: { name: 'fz-proto' },
    spec: {
      event: { selector: 'payload.proto == true' },
      submit: {
        workflowTemplateRef: { name: 'fz-canary' },
        arguments: { parameters: [{ name: 'id', valueFrom: { event: 'payload.doc' } }] },
      },
    },
  });
  await sleep(2000);
  for (let i = 0; i < per; i++) {
    const doc = hostileDoc(rng);
    const inline = JSON.parse(JSON.stringify(doc.value)) as Record<string, unknown>;
    const escaped = rng.chance(0.5);
    const raw = (v: unknown) => (escaped ? JSON.stringify(v).replaceAll('"__proto__"', '"\\u005f_proto__"') : JSON.stringify(v));
    // REST create: the hostile keys inside a template and in labels.
    const body = raw({
      workflow: {
        apiVersion: 'plugflow.io/v1alpha1',
        kind: 'Workflow',
        metadata: { generateName: 'fz-pr-', labels: inline },
        spec: { entrypoint: 'main', templates: [{ name: 'main', container: { ...container, ...inline } }] },
      },
    });
    for (const [what, answer] of [
      ['REST create', await submitRaw(c, body)],
      ['event', await sendEvent(c.serverUrl, c.token, c.namespace, '', raw({ proto: true, doc: inline, ...inline }))],
    ] as const) {
      t.tried++;
      if (answer.status === 200 || answer.status === 503 || (answer.status >= 400 && answer.status < 500 && namesProblem(answer.text)))
        t.accepted++;
      else tally.fail(SYSTEM, `${what} with ${doc.label}: answered ${answer.status || answer.error}: ${answer.text.slice(0, 200)}`);
    }
    // Stored straight in the API server: the podSpecPatch texts (the pod builder in the
    // controller reads them), and half the time an opaque plugin section too (validation's check).
    const name = `fz-pk-${i}`;
    const templates: unknown[] = [{ name: 'main', container, podSpecPatch: asText(rng, doc.value).text }];
    if (rng.chance(0.5)) templates.push({ name: 'p', plugin: { fz: inline } });
    const spec = { entrypoint: 'main', podSpecPatch: asText(rng, doc.value).text, templates };
    await c.client
      .create(
        WORKFLOWS,
        c.namespace,
        JSON.parse(raw({ apiVersion: 'plugflow.io/v1alpha1', kind: 'Workflow', metadata: { name }, spec })) as unknown,
      )
      .catch(() => undefined);
  }
  await sleep(3000);
  await cleanProbe(c, tally, `fz-pk-clean-${rng.int(0, 1e6)}`);
}

function submitRaw(c: ClusterFuzzTarget, body: string) {
  return call(`${c.serverUrl}/api/v1/workflows/${c.namespace}`, 'POST', c.token, body, { 'content-type': 'application/json' });
}

const META_VALUES = [
  '"}}], "hostPID": true, "volumes": [{"name": "h", "hostPath": {"path": "/"}}], "x": [{"y": {"z": "',
  '1\nhostPID: true\nvolumes:\n  - name: h\n    hostPath: {path: /}\n',
  "' }]}, hostPID: true, x: [{ y: '",
  'a: b',
  '---\nhostPID: true',
  '{{workflow.name}}',
  '{{=1+1}}',
  ']]]}}}',
  '- hostPID\n- true',
  '#',
  '"',
  '\\"',
  '  : ',
  '...',
];

/** Workflow- and template-level patches setting one env var each from the parameter. */
function metaPatches(rng: Prng, tag: string): { wf: string; tpl: string } {
  const patch = (env: string) => {
    const v = { containers: [{ name: 'main', env: [{ name: env, value: tag }] }] };
    return rng.chance(0.5)
      ? JSON.stringify(v)
      : `containers:\n  - name: main\n    env:\n      - name: ${env}\n        value: ${rng.chance(0.5) ? `"${tag}"` : `'${tag}'`}\n`;
  };
  return { wf: patch('FZ_W'), tpl: patch('FZ_T') };
}

/** (c) Metacharacter values through parameters and event payloads into rendered podSpecPatch. */
export async function fuzzRenderedValues(rng: Prng, c: ClusterFuzzTarget, tally: Tally, per: number): Promise<void> {
  const t = tally.of(META);
  const viaEvent = metaPatches(rng, '{{workflow.parameters.v}}');
  await c.client.create(WORKFLOW_TEMPLATES, c.namespace, {
    apiVersion: 'plugflow.io/v1alpha1',
    kind: 'WorkflowTemplate',
    metadata: { name: 'fz-meta' },
    spec: {
      entrypoint: 'main',
      arguments: { parameters: [{ name: 'v' }] },
      podSpecPatch: viaEvent.wf,
      templates: [{ name: 'main', container, podSpecPatch: viaEvent.tpl }],
    },
  });
  await c.client.create(BINDINGS, c.namespace, {
    apiVersion: 'plugflow.io/v1alpha1',
    kind: 'WorkflowEventBinding',
    metadata: { name: 'fz-meta' },
    spec: {
      event: { selector: 'payload.meta == true' },
      submit: {
        workflowTemplateRef: { name: 'fz-meta' },
        metadata: { labels: { 'fuzz.plugflow.io/meta': 'payload.id' } },
        arguments: { parameters: [{ name: 'v', valueFrom: { event: 'payload.v' } }] },
      },
    },
  });
  await sleep(2000);
  for (let i = 0; i < per; i++) {
    const value = (rng.chance(0.7) ? rng.pick(META_VALUES) : `${rng.pick(META_VALUES)}${rng.pick(META_VALUES)}`).replaceAll('\u0000', '');
    const viaEventInput = rng.chance(0.4);
    let name = `fz-meta-${i}`;
    t.tried++;
    if (viaEventInput) {
      const id = `m${i}-${rng.int(0, 1e6)}`;
      const a = await sendEvent(c.serverUrl, c.token, c.namespace, '', JSON.stringify({ meta: true, id, v: value }));
      if (a.status !== 200) {
        tally.fail(META, `event with value ${JSON.stringify(value)}: answered ${a.status || a.error}: ${a.text.slice(0, 200)}`);
        continue;
      }
      // 200 means accepted: the binding's workflow is created by the queue's workers soon after.
      let made: Workflow | undefined;
      for (let k = 0; k < 60 && !made; k++) {
        made = (await c.client.list<Workflow>(WORKFLOWS, { namespace: c.namespace, labelSelector: `fuzz.plugflow.io/meta=${id}` }))
          .items[0];
        if (!made) await sleep(500);
      }
      if (!made) {
        tally.fail(META, `event with value ${JSON.stringify(value)}: no workflow was made within 30 s`);
        continue;
      }
      name = made.metadata.name!;
    } else {
      const p = metaPatches(rng, '{{workflow.parameters.v}}');
      await c.client.create(WORKFLOWS, c.namespace, {
        apiVersion: 'plugflow.io/v1alpha1',
        kind: 'Workflow',
        metadata: { name },
        spec: {
          entrypoint: 'main',
          arguments: { parameters: [{ name: 'v', value }] },
          podSpecPatch: p.wf,
          templates: [{ name: 'main', container, podSpecPatch: p.tpl }],
        },
      });
    }
    const pod = await podOf(c, name);
    const where = `${viaEventInput ? 'event payload' : 'parameter'} ${JSON.stringify(value)} (workflow ${name})`;
    if (!pod) {
      const st = (await c.client.get<Workflow>(WORKFLOWS, c.namespace, name).catch(() => undefined))?.status;
      tally.fail(META, `${where}: no pod (${st?.phase ?? 'no phase'}: ${st?.message ?? ''})`);
      continue;
    }
    const main = pod.spec!.containers.find((x) => x.name === 'main');
    const env = Object.fromEntries((main?.env ?? []).map((e) => [e.name, e.value]));
    const problems = podProblems(pod);
    if (env.FZ_W !== value || env.FZ_T !== value) problems.push(`env FZ_W=${JSON.stringify(env.FZ_W)} FZ_T=${JSON.stringify(env.FZ_T)}`);
    if (problems.length) tally.fail(META, `${where}: the pod changed shape: ${problems.join(', ')}`);
    else t.accepted++;
  }
}
