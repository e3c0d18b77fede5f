import type { V1Pod, V1PodSpec } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { Workflow } from '../api/index.js';
import { buildAgentPod } from './agent-pod.js';
import type { PluginEntry } from '../plugins/parse-configmap.js';
import { buildStepPod } from './build-pod.js';
import { checkPluginSidecar, checkPod, checkStepServiceAccount, podPolicyRefusal, type PolicyViolation } from './pod-policy.js';
import { LABEL_POD_SECURITY, LABEL_PSA_ENFORCE, namespaceLevel, parsePodSecurityLevel } from './pod-security-level.js';

const pod = (spec: Partial<V1PodSpec>, annotations?: Record<string, string>): V1Pod => ({
  metadata: { name: 'p', ...(annotations ? { annotations } : {}) },
  spec: { containers: [{ name: 'main', image: 'x' }], ...spec },
});
const fields = (v: PolicyViolation[]) => v.map((x) => `${x.level} ${x.field}`);

/** A container that meets "restricted" by itself. */
const hardened = {
  allowPrivilegeEscalation: false,
  capabilities: { drop: ['ALL'] },
  runAsNonRoot: true,
  seccompProfile: { type: 'RuntimeDefault' },
};

const workflow = (spec: Partial<Workflow['spec']> = {}): Workflow => ({
  apiVersion: 'plugflow.io/v1alpha1',
  kind: 'Workflow',
  metadata: { name: 'wf', namespace: 'ns', uid: 'u' },
  spec: { templates: [], ...spec },
});

describe('checkPod: baseline', () => {
  it('passes a minimal pod, and every control of the level names its field', () => {
    expect(checkPod(pod({}), 'baseline')).toEqual([]);
    const bad = pod(
      {
        hostNetwork: true,
        hostPID: true,
        hostIPC: true,
        securityContext: {
          windowsOptions: { hostProcess: true },
          seLinuxOptions: { type: 'spc_t', user: 'root' },
          seccompProfile: { type: 'Unconfined' },
          sysctls: [
            { name: 'kernel.msgmax', value: '1' },
            { name: 'net.ipv4.tcp_syncookies', value: '1' },
          ],
        },
        containers: [
          {
            name: 'main',
            image: 'x',
            ports: [{ containerPort: 80, hostPort: 80 }],
            securityContext: {
              privileged: true,
              procMount: 'Unmasked',
              capabilities: { add: ['NET_BIND_SERVICE', 'SYS_ADMIN'] },
              appArmorProfile: { type: 'Unconfined' },
            },
          },
        ],
        volumes: [{ name: 'root', hostPath: { path: '/' } }],
      },
      { 'container.apparmor.security.beta.kubernetes.io/main': 'unconfined' },
    );
    expect(fields(checkPod(bad, 'baseline'))).toEqual([
      'baseline spec.hostNetwork',
      'baseline spec.hostPID',
      'baseline spec.hostIPC',
      'baseline spec.securityContext.windowsOptions.hostProcess',
      'baseline spec.securityContext.seLinuxOptions.type',
      'baseline spec.securityContext.seLinuxOptions.user',
      'baseline spec.securityContext.seccompProfile.type',
      'baseline spec.containers[0] "main" securityContext.appArmorProfile.type',
      'baseline spec.securityContext.sysctls[0].name',
      'baseline spec.containers[0] "main" securityContext.privileged',
      'baseline spec.containers[0] "main" securityContext.procMount',
      'baseline spec.containers[0] "main" securityContext.capabilities.add',
      'baseline spec.containers[0] "main" ports[0].hostPort',
      'baseline spec.volumes[0] "root".hostPath',
      'baseline metadata.annotations["container.apparmor.security.beta.kubernetes.io/main"]',
    ]);
    expect(checkPod(bad, 'privileged')).toEqual([]);
  });

  it('treats any value other than the allowed ones as a violation, wrong types included', () => {
    const odd = pod({
      hostPID: 'yes' as unknown as boolean,
      containers: [
        {
          name: 'm',
          image: 'x',
          securityContext: { privileged: 'true' as unknown as boolean, capabilities: { add: 'SYS_ADMIN' as unknown as string[] } },
        },
      ],
    });
    expect(fields(checkPod(odd, 'baseline'))).toEqual([
      'baseline spec.hostPID',
      'baseline spec.containers[0] "m" securityContext.privileged',
      'baseline spec.containers[0] "m" securityContext.capabilities.add',
    ]);
    // false and baseline's own capability set are fine; init and ephemeral containers are checked too.
    const ok = pod({
      hostNetwork: false,
      initContainers: [{ name: 'i', image: 'x', securityContext: { privileged: false, capabilities: { add: ['CHOWN'] } } }],
    });
    expect(checkPod(ok, 'baseline')).toEqual([]);
    const eph = pod({ ephemeralContainers: [{ name: 'e', image: 'x', securityContext: { privileged: true } }] });
    expect(fields(checkPod(eph, 'baseline'))).toEqual(['baseline spec.ephemeralContainers[0] "e" securityContext.privileged']);
  });

  it('reads own properties only: what a polluted prototype would add never decides', () => {
    const spec = Object.create({ hostPID: false }) as V1PodSpec;
    Object.assign(spec, { containers: [{ name: 'm', image: 'x' }], hostPID: true });
    expect(fields(checkPod({ spec }, 'baseline'))).toEqual(['baseline spec.hostPID']);
  });
});

describe('checkPod: restricted', () => {
  it('asks for non-root, no escalation, seccomp, drop ALL and core volume types', () => {
    const p = pod({
      containers: [{ name: 'main', image: 'x' }],
      volumes: [
        { name: 'n', nfs: { server: 's', path: '/' } },
        { name: 'e', emptyDir: {} },
      ],
    });
    expect(fields(checkPod(p, 'restricted'))).toEqual([
      'restricted spec.volumes[0] "n".nfs',
      'restricted spec.containers[0] "main" securityContext.allowPrivilegeEscalation',
      'restricted spec.containers[0] "main" securityContext.runAsNonRoot',
      'restricted spec.containers[0] "main" securityContext.seccompProfile.type',
      'restricted spec.containers[0] "main" securityContext.capabilities.drop',
    ]);
    expect(checkPod(pod({ containers: [{ name: 'main', image: 'x', securityContext: hardened }] }), 'restricted')).toEqual([]);
    // Pod-level runAsNonRoot and seccomp cover every container; a container may not undo them.
    const podLevel = pod({
      securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
      containers: [
        {
          name: 'main',
          image: 'x',
          securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'], add: ['NET_BIND_SERVICE'] } },
        },
      ],
    });
    expect(checkPod(podLevel, 'restricted')).toEqual([]);
    podLevel.spec!.containers[0]!.securityContext!.runAsNonRoot = false;
    podLevel.spec!.containers[0]!.securityContext!.runAsUser = 0;
    expect(fields(checkPod(podLevel, 'restricted'))).toEqual([
      'restricted spec.containers[0] "main" securityContext.runAsNonRoot',
      'restricted spec.containers[0] "main" securityContext.runAsUser',
    ]);
  });
});

describe('step and agent pods as plugflow builds them', () => {
  it('a plain step pod meets baseline and mounts no token; with the user settings the docs give it meets restricted', () => {
    const template = { name: 't', container: { image: 'alpine', command: ['true'] } };
    const plain = buildStepPod({ workflow: workflow(), nodeId: 'n', podName: 'p', template, executorImage: 'e' });
    expect(plain.spec!.automountServiceAccountToken).toBe(false);
    expect(checkPod(plain, 'baseline')).toEqual([]);
    const strict = buildStepPod({
      workflow: workflow({ securityContext: { runAsNonRoot: true, runAsUser: 1000, seccompProfile: { type: 'RuntimeDefault' } } }),
      nodeId: 'n',
      podName: 'p',
      template: {
        ...template,
        container: { ...template.container, securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } } },
      },
      executorImage: 'e',
    });
    expect(checkPod(strict, 'restricted')).toEqual([]);
    // An explicit automountServiceAccountToken is the user's choice.
    const withToken = buildStepPod({
      workflow: workflow({ automountServiceAccountToken: true }),
      nodeId: 'n',
      podName: 'p',
      template,
      executorImage: 'e',
    });
    expect(withToken.spec!.automountServiceAccountToken).toBe(true);
  });

  it('hostile pod fields reach the policy through the workflow, the template and podSpecPatch', () => {
    const template = {
      name: 't',
      container: { image: 'alpine', command: ['true'] },
      podSpecPatch: 'hostPID: true\ncontainers:\n- name: main\n  securityContext: {privileged: true}',
    };
    const built = buildStepPod({
      workflow: workflow({ hostNetwork: true, volumes: [{ name: 'r', hostPath: { path: '/' } }] }),
      nodeId: 'n',
      podName: 'p',
      template,
      executorImage: 'e',
    });
    const refusal = podPolicyRefusal('pod p', built, 'baseline', 'controller setting --pod-security-level');
    expect(refusal).toMatch(
      /^pod p breaks the pod security policy \(level "baseline", from the controller setting --pod-security-level\): /,
    );
    expect(refusal).toContain('spec.hostNetwork is true');
    expect(refusal).toContain('spec.hostPID is true');
    expect(refusal).toContain(
      'spec.containers[0] "main" securityContext.privileged is true (level "baseline"; fix: remove securityContext.privileged)',
    );
    expect(refusal).toContain('spec.volumes[1] "r".hostPath mounts "/" of the node');
  });

  it("step pods may not run as the agent's or a plugin's service account, by either field name", () => {
    expect(checkStepServiceAccount({ serviceAccountName: 'runner' }, 'plugflow-agent', '-executor-plugin')).toEqual([]);
    expect(
      fields(
        checkStepServiceAccount(
          { serviceAccountName: 'plugflow-agent', serviceAccount: 'hello-executor-plugin' },
          'plugflow-agent',
          '-executor-plugin',
        ),
      ),
    ).toEqual(['account spec.serviceAccountName', 'account spec.serviceAccount']);
  });

  const plugin = (securityContext: Record<string, unknown>): PluginEntry =>
    ({
      name: 'hello',
      namespace: 'ns',
      container: { name: 'hello', image: 'h', ports: [{ containerPort: 4355 }], securityContext },
      automountServiceAccountToken: false,
    }) as unknown as PluginEntry;

  it('the agent pod with a well-behaved plugin meets restricted', () => {
    const agent = buildAgentPod(
      { metadata: { name: 'wf', namespace: 'ns', uid: 'u' } },
      [plugin({ runAsNonRoot: true, runAsUser: 1000 })],
      { image: 'i', serviceAccountName: 'plugflow-agent' },
    );
    expect(checkPod(agent, 'restricted')).toEqual([]);
    expect(agent.spec!.serviceAccountName).toBe('plugflow-agent');
  });

  it('a plugin sidecar never runs as root, privileged, with added capabilities or escalation, whatever its ConfigMap says', () => {
    for (const sc of [
      { runAsNonRoot: false, runAsUser: 0 },
      { runAsNonRoot: true, runAsUser: 1000, privileged: true },
      { runAsNonRoot: true, runAsUser: 1000, capabilities: { add: ['NET_ADMIN'] } },
      { runAsNonRoot: true, runAsUser: 1000, allowPrivilegeEscalation: true },
      { runAsUser: 0 },
    ]) {
      expect(
        () => buildAgentPod({ metadata: { name: 'wf', namespace: 'ns', uid: 'u' } }, [plugin(sc)], { image: 'i' }),
        JSON.stringify(sc),
      ).toThrow(/plugin ns\/hello container "hello" securityContext\./);
    }
    expect(fields(checkPluginSidecar({ name: 'c', securityContext: { capabilities: { add: [] } } }, { runAsNonRoot: true }, 'c'))).toEqual([
      'plugin c securityContext.allowPrivilegeEscalation',
    ]);
  });
});

describe('namespaceLevel', () => {
  it("takes the strictest of the controller level, plugflow's label and the PSA enforce label", () => {
    expect(namespaceLevel(undefined, 'baseline')).toEqual({ level: 'baseline', source: 'controller setting --pod-security-level' });
    expect(namespaceLevel({ [LABEL_POD_SECURITY]: 'restricted' }, 'baseline').level).toBe('restricted');
    expect(namespaceLevel({ [LABEL_PSA_ENFORCE]: 'restricted' }, 'baseline')).toEqual({
      level: 'restricted',
      source: `namespace label ${LABEL_PSA_ENFORCE}=restricted`,
    });
    // Labels never lower the controller's level.
    expect(namespaceLevel({ [LABEL_POD_SECURITY]: 'privileged', [LABEL_PSA_ENFORCE]: 'privileged' }, 'baseline').level).toBe('baseline');
    expect(namespaceLevel({ [LABEL_POD_SECURITY]: 'baseline' }, 'privileged').level).toBe('baseline');
    // A typo in plugflow's label fails closed; an unknown PSA value is the API server's business.
    expect(namespaceLevel({ [LABEL_POD_SECURITY]: 'restricte' }, 'baseline').level).toBe('restricted');
    expect(namespaceLevel({ [LABEL_PSA_ENFORCE]: 'bogus' }, 'baseline').level).toBe('baseline');
  });

  it('parses operator settings strictly', () => {
    expect(parsePodSecurityLevel('restricted', 'flag')).toBe('restricted');
    expect(() => parsePodSecurityLevel('Restricted', '--pod-security-level')).toThrow(
      '--pod-security-level: "Restricted" is not a pod security level; use one of privileged, baseline, restricted',
    );
  });
});
