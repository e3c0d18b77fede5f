/**
 * Property test "pod-policy escapes" (issue 10; `make fuzz` runs the same idea against a real
 * cluster): seeded hostile pod settings through every route into a pod — workflow fields,
 * template fields, init containers and sidecars, podSpecPatch at both levels (with YAML tricks:
 * anchors, merge keys, tags, quoted keys, the deprecated `serviceAccount`, deletions of
 * plugflow's own hardening, `__proto__`), and plugin ConfigMaps — then the controller's own
 * decision path (buildStepPod / parsePluginConfigMap + buildAgentPod, then podPolicyRefusal).
 *
 * Invariant, checked by an oracle written independently of pod-policy.ts on the pod as the API
 * server would receive it (a JSON round trip; generator and oracle in
 * test/fuzz/pod-policy-cases.ts, shared with the cluster fuzz target): no pod the controller would create breaks the
 * namespace's level, runs a step as the agent's account, or has a plugin sidecar running as
 * root, privileged, with added capabilities or with privilege escalation.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { stringify } from 'yaml';
import { describe, expect, it } from 'vitest';
import {
  breaches,
  HOSTILE_CONTAINER_SC,
  hostileStep,
  sent,
  sidecarBreaches,
  withCleanPrototype,
} from '../../test/fuzz/pod-policy-cases.js';
import { buildAgentPod } from './agent-pod.js';
import { parsePluginConfigMap } from '../plugins/parse-configmap.js';
import { buildStepPod } from './build-pod.js';
import { checkStepServiceAccount, podPolicyRefusal, type PodSecurityLevel } from './pod-policy.js';

const SEED = Number(process.env.POD_POLICY_SEED ?? 20261123);
const RUNS = Number(process.env.POD_POLICY_RUNS ?? 1000);

/** mulberry32: small, seeded, good enough to pick cases. */
function prng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { chance: (p: number) => next() < p, pick: <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]! };
}

describe('pod-policy escapes (property, seeded)', () => {
  it(`no step pod the controller would create breaks its level (${RUNS} hostile workflows, seed ${SEED})`, () => {
    const rng = prng(SEED);
    const tally = { buildErrors: 0, refused: 0, created: 0 };
    for (let i = 0; i < RUNS; i++)
      withCleanPrototype(() => {
        const level = rng.pick<PodSecurityLevel>(['baseline', 'baseline', 'restricted']);
        const { workflow, template } = hostileStep(rng);
        let pod: V1Pod;
        try {
          pod = buildStepPod({ workflow, nodeId: 'n', podName: 'p', template, executorImage: 'e' });
        } catch {
          tally.buildErrors++;
          return;
        }
        const refusal = podPolicyRefusal(
          'pod p',
          pod,
          level,
          'test',
          checkStepServiceAccount(pod.spec, 'plugflow-agent', '-executor-plugin'),
        );
        if (refusal) {
          tally.refused++;
          expect(refusal).toMatch(/fix: /);
          return;
        }
        tally.created++;
        expect(breaches(sent(pod), level), `case ${i} (level ${level}): ${JSON.stringify({ spec: workflow.spec, template })}`).toEqual([]);
      });
    // Not vacuous: both outcomes happen many times.
    expect(tally.refused).toBeGreaterThan(RUNS / 5);
    expect(tally.created).toBeGreaterThan(RUNS / 10);
  });

  it(`no plugin sidecar from any ConfigMap runs as root, privileged, with added capabilities or escalation (${Math.round(RUNS / 3)} ConfigMaps)`, () => {
    const rng = prng(SEED + 1);
    let created = 0;
    let refused = 0;
    for (let i = 0; i < RUNS / 3; i++) {
      const sc: Record<string, unknown> = rng.chance(0.6)
        ? { runAsNonRoot: true, runAsUser: rng.pick([1000, 65534]) }
        : { runAsNonRoot: rng.pick([true, false, undefined]), runAsUser: rng.pick([0, 1000, undefined]) };
      for (let k = 0; k < 2; k++) if (rng.chance(0.3)) Object.assign(sc, rng.pick(HOSTILE_CONTAINER_SC));
      const container = {
        name: 'hello',
        image: 'h',
        command: ['serve'],
        ports: [{ containerPort: 4355 }],
        resources: { requests: { cpu: '10m', memory: '16Mi' }, limits: { cpu: '100m', memory: '64Mi' } },
        securityContext: sc,
      };
      // Sometimes a hand-written ConfigMap with YAML 1.1 tricks rather than a clean dump.
      const text = rng.chance(0.3) ? `${stringify(container)}\n`.replace(/privileged: true/, 'privileged: yes') : stringify(container);
      const cm = {
        metadata: { name: 'hello-executor-plugin', namespace: 'ns', labels: { 'workflows.plugflow.io/configmap-type': 'ExecutorPlugin' } },
        data: { 'sidecar.container': text },
      };
      let pod: V1Pod;
      try {
        const entry = parsePluginConfigMap(cm);
        pod = buildAgentPod({ metadata: { name: 'wf', namespace: 'ns', uid: 'u' } }, [entry], {
          image: 'i',
          serviceAccountName: 'plugflow-agent',
        });
      } catch {
        refused++;
        continue;
      }
      const level = rng.pick<PodSecurityLevel>(['baseline', 'restricted']);
      if (podPolicyRefusal('agent pod', pod, level, 'test')) {
        refused++;
        continue;
      }
      created++;
      expect(sidecarBreaches(sent(pod)), `case ${i}: ${text}`).toEqual([]);
      expect(breaches(sent(pod), level, false), `case ${i}: ${text}`).toEqual([]);
    }
    expect(refused).toBeGreaterThan(RUNS / 30);
    expect(created).toBeGreaterThan(RUNS / 30);
  });
});
