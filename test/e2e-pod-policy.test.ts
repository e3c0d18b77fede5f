/**
 * The pod policy end to end (issue 10 items 8 and 11), with the controller under the installed
 * RBAC and the local pod runner:
 *
 * - a step pod mounts no service account token unless the workflow asks for one (and the runner,
 *   playing the kubelet, then mounts one);
 * - a hostile pod field (podSpecPatch `hostPID`) fails the step with the level, the field and the
 *   fix, and no pod is created;
 * - a namespace labelled `workflows.plugflow.io/pod-security: restricted` refuses a plain step
 *   and runs one with the settings the README gives;
 * - steps cannot borrow the agent's service account, and an agent account that does not exist
 *   fails the http step with the commands that create it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LABEL_WORKFLOW, type Template, type Workflow } from '../src/api/index.js';
import { KubeClient } from '../src/kube/client.js';
import { NAMESPACES } from '../src/kube/resource.js';
import { LABEL_POD_SECURITY } from '../src/pods/pod-security-level.js';
import { expectPhase, nodeNamed, startE2eStack, waitFor, type E2eStack } from './support/e2e.js';

const SLOW = 180_000;
let stack: E2eStack;

function wf(name: string, templates: Template[], spec: Partial<Workflow['spec']> = {}): Workflow {
  return {
    apiVersion: 'plugflow.io/v1alpha1',
    kind: 'Workflow',
    metadata: { generateName: `${name}-` },
    spec: { entrypoint: 'main', templates, ...spec },
  } as Workflow;
}
const probeToken = {
  image: 'busybox',
  command: ['sh', '-c', 'if [ -e /var/run/secrets/kubernetes.io/serviceaccount/token ]; then echo token; else echo no-token; fi'],
};

async function run(w: Workflow): Promise<Workflow> {
  return stack.waitForCompletion(await stack.submit(w), 120_000);
}
async function podsOf(name: string) {
  return (await stack.core.listNamespacedPod({ namespace: stack.namespace, labelSelector: `${LABEL_WORKFLOW}=${name}` })).items;
}

describe('pod policy (e2e)', () => {
  beforeAll(async () => {
    stack = await startE2eStack({ prefix: 'podpolicy', server: false });
  }, SLOW);
  afterAll(async () => {
    await stack?.stop();
  }, SLOW);

  it(
    'a step pod gets no service account token unless the workflow asks for one',
    async () => {
      const plain = await run(wf('no-token', [{ name: 'main', container: probeToken }]));
      expectPhase(plain, 'Succeeded');
      const node = nodeNamed(plain, plain.metadata.name!);
      expect(node.outputs?.result).toBe('no-token');
      const [pod] = await podsOf(plain.metadata.name!);
      expect(pod!.spec!.automountServiceAccountToken).toBe(false);
      expect(pod!.spec!.volumes!.some((v) => v.projected?.sources?.some((s) => s.serviceAccountToken))).toBe(false);

      const asked = await run(wf('token', [{ name: 'main', container: probeToken }], { automountServiceAccountToken: true }));
      expectPhase(asked, 'Succeeded');
      expect(nodeNamed(asked, asked.metadata.name!).outputs?.result).toBe('token');
    },
    SLOW,
  );

  it(
    'a hostile podSpecPatch fails the step naming the level, the field and the fix; no pod is created',
    async () => {
      const hostile = await run(
        wf('host-pid', [
          {
            name: 'main',
            container: { image: 'busybox', command: ['true'] },
            podSpecPatch: '{"hostPID": true, "volumes": [{"name": "root", "hostPath": {"path": "/"}}]}',
          },
        ]),
      );
      expect(['Failed', 'Error']).toContain(hostile.status?.phase);
      const message = nodeNamed(hostile, hostile.metadata.name!).message ?? '';
      expect(message).toContain('breaks the pod security policy (level "baseline", from the controller setting --pod-security-level)');
      expect(message).toContain('spec.hostPID is true');
      expect(message).toContain('"root".hostPath mounts "/" of the node');
      expect(message).toMatch(/fix: remove hostPID/);
      expect(await podsOf(hostile.metadata.name!)).toEqual([]);
    },
    SLOW,
  );

  it(
    "steps cannot run as the agent's service account",
    async () => {
      const borrowed = await run(
        wf('borrow', [{ name: 'main', serviceAccountName: 'plugflow-agent', container: { image: 'busybox', command: ['true'] } }]),
      );
      expect(['Failed', 'Error']).toContain(borrowed.status?.phase);
      expect(nodeNamed(borrowed, borrowed.metadata.name!).message).toContain(
        'spec.serviceAccountName is "plugflow-agent", the service account of the workflow agent (service account rule',
      );
      expect(await podsOf(borrowed.metadata.name!)).toEqual([]);
    },
    SLOW,
  );

  it(
    'an agent account that does not exist fails the http step with the commands that create it',
    async () => {
      const missing = await run(
        wf('no-agent-sa', [{ name: 'main', http: { url: 'http://127.0.0.1:9/never' } }], { executor: { serviceAccountName: 'nobody' } }),
      );
      expect(['Failed', 'Error']).toContain(missing.status?.phase);
      const message = nodeNamed(missing, missing.metadata.name!).message ?? '';
      expect(message).toContain(`service account ${stack.namespace}/nobody, which the agent runs as, does not exist`);
      expect(message).toContain(
        `kubectl create rolebinding nobody -n ${stack.namespace} --clusterrole=plugflow-agent --serviceaccount=${stack.namespace}:nobody`,
      );
    },
    SLOW,
  );

  it(
    'a namespace labelled restricted refuses a plain step and runs one with the documented settings',
    async () => {
      const client = await KubeClient.fromKubeConfig(stack.admin);
      await client
        .mergePatch(NAMESPACES, undefined, stack.namespace, { metadata: { labels: { [LABEL_POD_SECURITY]: 'restricted' } } })
        .finally(() => client.close());
      await waitFor(
        'the controller to see the label',
        () => stack.controller.caches.namespaces.get(undefined, stack.namespace)?.metadata?.labels?.[LABEL_POD_SECURITY] === 'restricted',
        { timeoutMs: 30_000 },
      );

      const plain = await run(wf('plain', [{ name: 'main', container: { image: 'busybox', command: ['true'] } }]));
      expect(['Failed', 'Error']).toContain(plain.status?.phase);
      const message = nodeNamed(plain, plain.metadata.name!).message ?? '';
      expect(message).toContain(`level "restricted", from the namespace label ${LABEL_POD_SECURITY}=restricted`);
      expect(message).toContain('spec.containers[0] "main" securityContext.allowPrivilegeEscalation is unset');
      expect(await podsOf(plain.metadata.name!)).toEqual([]);

      const hardened = await run(
        wf(
          'hardened',
          [
            {
              name: 'main',
              container: {
                image: 'busybox',
                command: ['echo', 'ok'],
                securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
              },
            },
          ],
          {
            securityContext: { runAsNonRoot: true, runAsUser: 1000, runAsGroup: 1000, seccompProfile: { type: 'RuntimeDefault' } },
          },
        ),
      );
      expectPhase(hardened, 'Succeeded');
      expect(nodeNamed(hardened, hardened.metadata.name!).outputs?.result).toBe('ok');
    },
    SLOW,
  );
});
