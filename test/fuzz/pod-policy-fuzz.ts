/**
 * Fuzz target "pod-policy escapes" against the real system: hostile workflows (every route into
 * a pod: workflow and template fields, init containers, sidecars, podSpecPatch YAML tricks) and
 * hostile plugin ConfigMaps (sidecar securityContext) are created in the fuzz namespace, whose
 * level is the controller's default (`baseline`). No pod runner serves that namespace, so the
 * pods the controller creates stay Pending — exactly what the invariant is about:
 *
 * - every pod the controller created there passes the level (the oracle of pod-policy-cases.ts,
 *   on the pod as the API server stored it), and no step pod runs as the agent's account;
 * - every agent pod's plugin sidecars run as non-root, unprivileged, with no added capability
 *   and no privilege escalation;
 * - every hostile workflow is decided within 90 s; one whose pod was refused says why.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { stringify } from 'yaml';
import { LABEL_COMPONENT, LABEL_WORKFLOW, type Workflow } from '../../src/api/index.js';
import { ApiError } from '../../src/kube/errors.js';
import { CONFIGMAPS, PODS, WORKFLOWS } from '../../src/kube/resource.js';
import { sleep } from '../soak/component.js';
import type { Prng } from '../soak/prng.js';
import type { ClusterFuzzTarget } from './cluster-fuzz.js';
import { breaches, HOSTILE_CONTAINER_SC, hostileStep, sent, sidecarBreaches } from './pod-policy-cases.js';
import type { Tally } from './tally.js';
import { errorMessage } from '../../src/log/error-message.js';

const TARGET = 'cluster: pod-policy escapes';

export async function fuzzPodPolicy(rng: Prng, t: ClusterFuzzTarget, tally: Tally, per: number, log: (l: string) => void): Promise<void> {
  const { client, namespace: ns } = t;
  const tt = tally.of(TARGET);
  const stored: string[] = [];
  for (let i = 0; i < per; i++) {
    const { workflow, template } = hostileStep(rng);
    const name = `fz-pp-${i}`;
    const body: Workflow = {
      ...workflow,
      metadata: { name },
      spec: { ...workflow.spec, entrypoint: template.name, templates: [template] },
    };
    tt.tried++;
    try {
      await client.create(WORKFLOWS, ns, body);
      stored.push(name);
    } catch (err) {
      if (err instanceof ApiError && err.code >= 400 && err.code < 500) tt.rejected++;
      else tally.fail(TARGET, `${name}: the API server answered ${errorMessage(err).slice(0, 200)}`);
    }
  }
  // Plugin ConfigMaps whose sidecar asks for root, privilege or capabilities: discovery must
  // refuse them, so no agent pod built afterwards carries them.
  for (let i = 0; i < Math.ceil(per / 4); i++) {
    const sc = { runAsNonRoot: rng.pick([true, false]), runAsUser: rng.pick([0, 1000]), ...rng.pick(HOSTILE_CONTAINER_SC) };
    const container = {
      name: `fz-pps-${i}`,
      image: 'x',
      command: ['serve'],
      ports: [{ containerPort: 17_600 + i }],
      resources: { requests: { cpu: '10m', memory: '16Mi' }, limits: { cpu: '100m', memory: '64Mi' } },
      securityContext: sc,
    };
    const text = stringify(container).replace(/privileged: true/, 'privileged: yes');
    tt.tried++;
    await client
      .create(CONFIGMAPS, ns, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: `fz-pps-${i}-executor-plugin`, labels: { 'workflows.plugflow.io/configmap-type': 'ExecutorPlugin' } },
        data: { 'sidecar.container': text },
      })
      .catch((err: Error) => tally.fail(TARGET, `plugin ConfigMap ${i}: ${err.message.slice(0, 200)}`));
  }

  // Every stored workflow decided: a phase (Running with a Pending pod counts).
  const deadline = Date.now() + 90_000;
  let pending = stored;
  while (pending.length && Date.now() < deadline) {
    const list = (await client.list<Workflow>(WORKFLOWS, { namespace: ns })).items;
    const byName = new Map(list.map((w) => [w.metadata.name!, w]));
    pending = pending.filter((n) => !byName.get(n)?.status?.phase);
    if (pending.length) await sleep(2000);
  }
  for (const n of pending) tally.fail(TARGET, `${n}: no phase after 90 s`);
  await sleep(2000); // creates that were under way

  const pods = (await client.list<V1Pod>(PODS, { namespace: ns, labelSelector: LABEL_WORKFLOW })).items;
  let created = 0;
  for (const pod of pods) {
    const wf = pod.metadata?.labels?.[LABEL_WORKFLOW] ?? '';
    const isAgent = pod.metadata?.labels?.[LABEL_COMPONENT] === 'agent';
    const bad = [...breaches(sent(pod), 'baseline', !isAgent), ...(isAgent ? sidecarBreaches(sent(pod)) : [])];
    if (wf.startsWith('fz-pp-')) created++;
    if (bad.length) tally.fail(TARGET, `pod ${pod.metadata?.name} of workflow ${wf} was created breaking the policy: ${bad.join(', ')}`);
    if (isAgent && pod.spec?.containers.some((c) => c.name.startsWith('fz-pps-')))
      tally.fail(TARGET, `agent pod ${pod.metadata?.name} carries a hostile plugin sidecar`);
  }
  const list = (await client.list<Workflow>(WORKFLOWS, { namespace: ns })).items.filter((w) => stored.includes(w.metadata.name!));
  let refused = 0;
  for (const w of list) {
    const messages = Object.values(w.status?.nodes ?? {}).map((n) => n.message ?? '');
    if (messages.some((m) => m.includes('breaks the pod security policy'))) {
      refused++;
      if (!messages.some((m) => /\(fix: |; fix: /.test(m))) tally.fail(TARGET, `${w.metadata.name}: refused without naming the fix`);
    }
  }
  tt.accepted += created;
  tt.rejected += refused;
  log(
    `  pod-policy: ${stored.length} hostile workflows stored, ${created} pods created (all checked), ${refused} refused by the policy, ${pods.length} pods checked in all`,
  );
}
