/**
 * Issue 10 item 1: a podSpecPatch with `__proto__` (or `constructor.prototype`) must never reach
 * Object.prototype. The attack: a hostile workflow's patch sets `Object.prototype.podSpecPatch`,
 * and the NEXT pod built — for any workflow — inherits a privileged patch.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Workflow } from '../api/index.js';
import { buildStepPod } from './build-pod.js';
import { errorMessage } from '../log/error-message.js';

const PRIVILEGED = JSON.stringify({
  hostPID: true,
  containers: [{ name: 'main', securityContext: { privileged: true }, volumeMounts: [{ name: 'host', mountPath: '/host' }] }],
  volumes: [{ name: 'host', hostPath: { path: '/' } }],
});

function wf(name: string, namespace: string, podSpecPatch?: string): Workflow {
  return {
    apiVersion: 'plugflow.io/v1alpha1',
    kind: 'Workflow',
    metadata: { name, namespace, uid: `uid-${name}` },
    spec: { templates: [], ...(podSpecPatch !== undefined ? { podSpecPatch } : {}) },
  };
}

const build = (workflow: Workflow, templatePatch?: string) =>
  buildStepPod({
    workflow,
    nodeId: `${workflow.metadata.name}-1`,
    podName: `${workflow.metadata.name}-pod`,
    workflowPodSpecPatch: workflow.spec.podSpecPatch,
    template: {
      name: 't',
      container: { image: 'alpine', command: ['true'] },
      ...(templatePatch !== undefined ? { podSpecPatch: templatePatch } : {}),
    },
    executorImage: 'plugflow:dev',
  });

const POLLUTABLE = ['podSpecPatch', 'hostPID', 'privileged', 'polluted', 'x'];

function prototypeIsClean(): void {
  for (const key of POLLUTABLE) expect(Object.hasOwn(Object.prototype, key), `Object.prototype.${key}`).toBe(false);
  expect(Object.keys(Object.prototype)).toEqual([]);
  expect(({} as Record<string, unknown>).podSpecPatch).toBeUndefined();
}

afterEach(() => {
  // Leave no pollution behind for other tests even when an assertion failed.
  for (const key of POLLUTABLE) delete (Object.prototype as Record<string, unknown>)[key];
  delete (Array.prototype as unknown as Record<string, unknown>).polluted;
});

const clean = () => {
  const pod = build(wf('clean', 'other-namespace'));
  expect(pod.spec!.hostPID).toBeUndefined();
  expect(pod.spec!.volumes!.map((v) => v.name)).toEqual(['plugflow-var']);
  expect(pod.spec!.containers.find((c) => c.name === 'main')!.securityContext).toBeUndefined();
  expect(JSON.stringify(pod)).not.toMatch(/hostPath|privileged|hostPID/);
};

describe('podSpecPatch cannot reach object prototypes', () => {
  const hostile: [string, string][] = [
    ['JSON __proto__', JSON.stringify({ __proto__: null }).replace('null', JSON.stringify({ podSpecPatch: PRIVILEGED }))],
    ['JSON __proto__ written as an escape', `{"\\u005f_proto__": {"podSpecPatch": ${JSON.stringify(PRIVILEGED)}}}`],
    ['YAML __proto__', `__proto__:\n  podSpecPatch: '${PRIVILEGED}'`],
    ['JSON constructor.prototype', `{"constructor": {"prototype": {"podSpecPatch": ${JSON.stringify(PRIVILEGED)}}}}`],
    [
      'nested __proto__',
      `{"containers": [{"name": "main", "__proto__": {"polluted": true}}], "securityContext": {"__proto__": {"hostPID": true}}}`,
    ],
    ['__proto__ in a list element appended', `{"tolerations": [{"__proto__": {"polluted": true}}]}`],
  ];
  for (const [name, patch] of hostile) {
    for (const level of ['workflow', 'template'] as const) {
      it(`${name} in the ${level} podSpecPatch: refused or inert, and the next pod is clean`, () => {
        const workflow = level === 'workflow' ? wf('hostile', 'tenant-a', patch) : wf('hostile', 'tenant-a');
        try {
          const pod = build(workflow, level === 'template' ? patch : undefined);
          // Inert: an own `constructor` key is plain data (the API server prunes it), never a path.
          expect(pod.spec!.hostPID).toBeUndefined();
          expect(pod.spec!.volumes!.some((v) => v.hostPath)).toBe(false);
          expect(pod.spec!.containers.some((c) => c.securityContext?.privileged)).toBe(false);
        } catch (err) {
          expect(errorMessage(err)).toMatch(/podSpecPatch.*__proto__|__proto__.*podSpecPatch/);
        }
        clean();
        prototypeIsClean();
      });
    }
  }
});
