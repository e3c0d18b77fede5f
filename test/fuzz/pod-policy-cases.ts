/**
 * Hostile pod settings for the "pod-policy escapes" checks, shared by the unit property test
 * (src/pods/pod-policy-escapes.test.ts) and the cluster fuzz target (pod-policy-fuzz.ts): a
 * generator of workflows that try every route into a pod, and an oracle — written
 * independently of src/pods/pod-policy.ts — of what no created pod may contain.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { Template, Workflow } from '../../src/api/index.js';
import type { PodSecurityLevel } from '../../src/pods/pod-policy.js';

/** What the generator needs of a random source (test/soak/prng.ts's Prng fits). */
export interface CaseRng {
  chance(p: number): boolean;
  pick<T>(items: readonly T[]): T;
}

export const HOSTILE_CONTAINER_SC: Record<string, unknown>[] = [
  { privileged: true },
  { privileged: 'true' },
  { capabilities: { add: ['SYS_ADMIN'] } },
  { capabilities: { add: ['NET_RAW', 'CHOWN'] } },
  { capabilities: { add: 'ALL' } },
  { capabilities: { drop: [] } },
  { allowPrivilegeEscalation: true },
  { runAsUser: 0 },
  { runAsNonRoot: false },
  { procMount: 'Unmasked' },
  { seccompProfile: { type: 'Unconfined' } },
  { appArmorProfile: { type: 'Unconfined' } },
  { seLinuxOptions: { type: 'spc_t' } },
  { windowsOptions: { hostProcess: true } },
];
const SAFE_CONTAINER_SC: Record<string, unknown>[] = [
  {},
  { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
  { runAsNonRoot: true, runAsUser: 1000, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'], add: ['NET_BIND_SERVICE'] } },
];
const HOSTILE_POD_SC: Record<string, unknown>[] = [
  { runAsUser: 0 },
  { runAsNonRoot: false },
  { seccompProfile: { type: 'Unconfined' } },
  { sysctls: [{ name: 'kernel.core_pattern', value: '|/x' }] },
  { seLinuxOptions: { user: 'system_u' } },
  { windowsOptions: { hostProcess: true } },
];
const SAFE_POD_SC: Record<string, unknown>[] = [{}, { runAsNonRoot: true, runAsUser: 1000, seccompProfile: { type: 'RuntimeDefault' } }];
const HOSTILE_VOLUMES = [
  { name: 'root', hostPath: { path: '/' } },
  { name: 'sock', hostPath: { path: '/var/run/docker.sock', type: 'Socket' } },
  { name: 'n', nfs: { server: 'x', path: '/' } },
  { name: 'g', gitRepo: { repository: 'x' } },
];

/** podSpecPatch texts, many of them YAML tricks that reach the same dangerous fields. */
const PATCHES = [
  'hostPID: true',
  '{"hostNetwork": true}',
  '"hostIPC": !!bool "true"',
  'hostPID: yes',
  'x: &evil {privileged: true}\ncontainers:\n- name: main\n  securityContext: *evil',
  'base: &b {hostPath: {path: /}}\nvolumes:\n- <<: *b\n  name: root',
  'containers:\n- name: wait\n  securityContext: null',
  'initContainers:\n- name: init\n  securityContext: {allowPrivilegeEscalation: null, capabilities: null}',
  'containers:\n- name: main\n  ports:\n  - {containerPort: 22, hostPort: 22}',
  'serviceAccount: plugflow-agent',
  'serviceAccountName: hello-executor-plugin',
  'automountServiceAccountToken: true',
  '{"__proto__": {"hostPID": true}, "containers": [{"name": "main", "securityContext": {"__proto__": {"privileged": true}}}]}',
  'securityContext: {runAsUser: 0}',
  'containers:\n- name: evil\n  image: x\n  securityContext: {privileged: true}',
  'ephemeralContainers:\n- name: e\n  image: x\n  securityContext: {capabilities: {add: [SYS_PTRACE]}}',
  'volumes:\n- name: plugflow-var\n  hostPath: {path: /etc}',
  'containers:\n- name: main\n  securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}',
  'securityContext: {runAsNonRoot: true, seccompProfile: {type: RuntimeDefault}}',
  '{}',
];

export function hostileStep(rng: CaseRng): { workflow: Workflow; template: Template } {
  const sc = () => (rng.chance(0.3) ? rng.pick(HOSTILE_CONTAINER_SC) : rng.pick(SAFE_CONTAINER_SC));
  const podSc = () => (rng.chance(0.25) ? rng.pick(HOSTILE_POD_SC) : rng.pick(SAFE_POD_SC));
  const spec: Record<string, unknown> = { templates: [] };
  const t: Record<string, unknown> = { name: 't', container: { image: 'alpine', command: ['true'], securityContext: sc() } };
  if (rng.chance(0.3)) spec.securityContext = podSc();
  if (rng.chance(0.2)) t.securityContext = podSc();
  if (rng.chance(0.1)) spec.hostNetwork = rng.pick([true, false, 'true']);
  if (rng.chance(0.15)) spec.volumes = [rng.pick(HOSTILE_VOLUMES)];
  if (rng.chance(0.15)) t.volumes = [rng.pick([...HOSTILE_VOLUMES, { name: 'ok', emptyDir: {} }])];
  if (rng.chance(0.2)) spec.podSpecPatch = rng.pick(PATCHES);
  if (rng.chance(0.35)) t.podSpecPatch = rng.pick(PATCHES);
  if (rng.chance(0.15)) t.sidecars = [{ name: 'side', image: 'x', command: ['sleep', '1'], securityContext: sc() }];
  if (rng.chance(0.15)) t.initContainers = [{ name: 'pre', image: 'x', command: ['true'], securityContext: sc() }];
  if (rng.chance(0.1)) (t.container as Record<string, unknown>).ports = [{ containerPort: 80, hostPort: rng.pick([80, 0]) }];
  if (rng.chance(0.1)) spec.serviceAccountName = rng.pick(['plugflow-agent', 'runner', 'x-executor-plugin']);
  if (rng.chance(0.1)) t.serviceAccountName = rng.pick(['plugflow-agent', 'runner']);
  if (rng.chance(0.1))
    spec.podMetadata = {
      annotations: { 'container.apparmor.security.beta.kubernetes.io/main': rng.pick(['unconfined', 'runtime/default']) },
    };
  const workflow = {
    apiVersion: 'plugflow.io/v1alpha1',
    kind: 'Workflow',
    metadata: { name: 'wf', namespace: 'ns', uid: 'u' },
    spec,
  } as unknown as Workflow;
  return { workflow, template: t as unknown as Template };
}

// ---- the oracle: independent of pod-policy.ts, on what the API server would receive ----
const BASE_CAPS = new Set([
  'AUDIT_WRITE',
  'CHOWN',
  'DAC_OVERRIDE',
  'FOWNER',
  'FSETID',
  'KILL',
  'MKNOD',
  'NET_BIND_SERVICE',
  'SETFCAP',
  'SETGID',
  'SETPCAP',
  'SETUID',
  'SYS_CHROOT',
]);
export type AnyObj = Record<string, any>;
const EMPTY: AnyObj = Object.freeze(Object.create(null));

export function breaches(sent: AnyObj, level: PodSecurityLevel, step = true): string[] {
  const out: string[] = [];
  const s = sent.spec ?? EMPTY;
  const containers: AnyObj[] = [...(s.initContainers ?? []), ...(s.containers ?? []), ...(s.ephemeralContainers ?? [])];
  for (const k of ['hostNetwork', 'hostPID', 'hostIPC']) if (s[k] !== undefined && s[k] !== false) out.push(k);
  if ((s.volumes ?? []).some((v: AnyObj) => v.hostPath)) out.push('hostPath');
  if (s.securityContext?.seccompProfile?.type === 'Unconfined') out.push('pod seccomp');
  if ((s.securityContext?.sysctls ?? []).some((x: AnyObj) => x.name === 'kernel.core_pattern')) out.push('sysctl');
  if (s.securityContext?.windowsOptions?.hostProcess) out.push('hostProcess');
  if (s.securityContext?.seLinuxOptions?.user) out.push('selinux user');
  for (const [k, v] of Object.entries(sent.metadata?.annotations ?? EMPTY))
    if (k.startsWith('container.apparmor') && v === 'unconfined') out.push('apparmor annotation');
  if (
    step &&
    (s.serviceAccountName === 'plugflow-agent' ||
      s.serviceAccount === 'plugflow-agent' ||
      String(s.serviceAccountName ?? '').endsWith('-executor-plugin'))
  )
    out.push('agent account');
  for (const c of containers) {
    const sc = c.securityContext ?? EMPTY;
    if (sc.privileged !== undefined && sc.privileged !== false) out.push(`${c.name} privileged`);
    const add = sc.capabilities?.add;
    if (add !== undefined && !(Array.isArray(add) && add.every((x: string) => BASE_CAPS.has(x)))) out.push(`${c.name} caps`);
    if ((c.ports ?? []).some((p: AnyObj) => p.hostPort)) out.push(`${c.name} hostPort`);
    if (sc.procMount && sc.procMount !== 'Default') out.push(`${c.name} procMount`);
    if (sc.seccompProfile?.type === 'Unconfined' || sc.appArmorProfile?.type === 'Unconfined') out.push(`${c.name} unconfined`);
    if (sc.seLinuxOptions?.type === 'spc_t' || sc.windowsOptions?.hostProcess) out.push(`${c.name} selinux/hostProcess`);
    if (level === 'restricted') {
      if (sc.allowPrivilegeEscalation !== false) out.push(`${c.name} escalation`);
      if (!(sc.capabilities?.drop ?? []).includes('ALL')) out.push(`${c.name} drop`);
      if ((sc.runAsNonRoot ?? s.securityContext?.runAsNonRoot) !== true) out.push(`${c.name} nonroot`);
      if (sc.runAsUser === 0 || s.securityContext?.runAsUser === 0) out.push(`${c.name} root`);
      const seccomp = sc.seccompProfile?.type ?? s.securityContext?.seccompProfile?.type;
      if (seccomp !== 'RuntimeDefault' && seccomp !== 'Localhost') out.push(`${c.name} seccomp`);
    }
  }
  if (level === 'restricted' && (s.volumes ?? []).some((v: AnyObj) => v.nfs || v.gitRepo)) out.push('volume type');
  return out;
}

export function sidecarBreaches(sent: AnyObj): string[] {
  const podSc = sent.spec.securityContext ?? EMPTY;
  return (sent.spec.containers as AnyObj[])
    .filter((c) => c.name !== 'main')
    .flatMap((c) => {
      const sc = c.securityContext ?? EMPTY;
      const bad: string[] = [];
      if ((sc.runAsNonRoot ?? podSc.runAsNonRoot) !== true || (sc.runAsUser ?? podSc.runAsUser) === 0) bad.push('root');
      if (sc.privileged) bad.push('privileged');
      if ((sc.capabilities?.add ?? []).length) bad.push('caps');
      if (sc.allowPrivilegeEscalation !== false) bad.push('escalation');
      return bad.map((b) => `${c.name} ${b}`);
    });
}

/**
 * What the API server receives: the JSON text, read back into null-prototype objects so that a
 * polluted Object.prototype (the podSpecPatch `__proto__` case, issue 10 item 1) cannot make
 * the oracle see fields that are not in the text.
 */
export const sent = (pod: V1Pod): AnyObj =>
  JSON.parse(JSON.stringify(pod), (_k, v: unknown) =>
    typeof v === 'object' && v !== null && !Array.isArray(v) ? Object.assign(Object.create(null), v) : v,
  );

/** Runs `fn`, then removes what a hostile patch may have added to Object.prototype. */
export function withCleanPrototype(fn: () => void): void {
  const before = new Set(Object.getOwnPropertyNames(Object.prototype));
  try {
    fn();
  } finally {
    for (const k of Object.getOwnPropertyNames(Object.prototype))
      if (!before.has(k)) delete (Object.prototype as Record<string, unknown>)[k];
  }
}
