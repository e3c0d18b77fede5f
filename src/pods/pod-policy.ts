/**
 * The controller's pod policy: the Kubernetes Pod Security Standards (levels `privileged`,
 * `baseline`, `restricted`, as the Kubernetes documentation defines their controls), checked on
 * the pod exactly as it will be created — after template fields, workflow fields and every
 * podSpecPatch are merged — so no route into the pod spec is left unchecked. Pure: the
 * controller calls it before any create, and a violation fails the node (or the workflow's
 * plugin steps, for the agent pod) with the level, the field and the fix.
 *
 * Why in the controller when Pod Security Admission (PSA) exists: PSA is enforced by the API
 * server only where a namespace carries `pod-security.kubernetes.io/enforce`, and its refusal
 * names the pod, not the workflow field. This check runs everywhere (default `baseline`) and
 * earlier; PSA, where configured, still applies on top (see pod-security-level.ts).
 *
 * Plugin sidecars have a floor of their own at every level (checkPluginSidecar): no root, no
 * `privileged`, no added capabilities, no privilege escalation — a plugin is installed once and
 * then runs inside every workflow of its namespaces.
 *
 * Every value is read as an own property (what JSON.stringify sends to the API server), and any
 * value other than the allowed ones — including wrong types — is a violation.
 */
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import { isJsonObject } from '../api/index.js';

export type PodSecurityLevel = 'privileged' | 'baseline' | 'restricted';
export const POD_SECURITY_LEVELS: readonly PodSecurityLevel[] = ['privileged', 'baseline', 'restricted'];

export interface PolicyViolation {
  /**
   * The level whose control is broken; `plugin` for the plugin sidecar floor, `account` for the
   * service accounts reserved to plugflow's own pods.
   */
  level: 'baseline' | 'restricted' | 'plugin' | 'account';
  /** Path in the created pod, e.g. `spec.containers[0] "main" securityContext.privileged`. */
  field: string;
  /** What is wrong (the value found). */
  problem: string;
  /** What to change. */
  fix: string;
}

/** Capabilities `baseline` allows a container to add (the container runtimes' default set). */
export const BASELINE_CAPABILITIES: readonly string[] = [
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
];
/** The "safe" (namespaced, isolated) sysctls `baseline` allows. */
export const SAFE_SYSCTLS: readonly string[] = [
  'kernel.shm_rmid_forced',
  'net.ipv4.ip_local_port_range',
  'net.ipv4.ip_unprivileged_port_start',
  'net.ipv4.tcp_syncookies',
  'net.ipv4.ping_group_range',
  'net.ipv4.ip_local_reserved_ports',
  'net.ipv4.tcp_keepalive_time',
  'net.ipv4.tcp_fin_timeout',
  'net.ipv4.tcp_keepalive_intvl',
  'net.ipv4.tcp_keepalive_probes',
];
const SELINUX_TYPES = ['', 'container_t', 'container_init_t', 'container_kvm_t', 'container_engine_t'];
/** Volume sources `restricted` allows (everything else, hostPath included, is refused). */
export const RESTRICTED_VOLUME_SOURCES: readonly string[] = [
  'configMap',
  'csi',
  'downwardAPI',
  'emptyDir',
  'ephemeral',
  'persistentVolumeClaim',
  'projected',
  'secret',
];
const APPARMOR_ANNOTATION = 'container.apparmor.security.beta.kubernetes.io/';
const SECCOMP_ANNOTATIONS = ['seccomp.security.alpha.kubernetes.io/pod', 'container.seccomp.security.alpha.kubernetes.io/'];

type Obj = Record<string, unknown>;
const isObj: (v: unknown) => v is Obj = isJsonObject;
/** An own property, or undefined: inherited values never reach the API server. */
function own(o: unknown, key: string): unknown {
  return isObj(o) && Object.prototype.hasOwnProperty.call(o, key) ? o[key] : undefined;
}
const unset = (v: unknown): boolean => v === undefined || v === null;
const show = (v: unknown): string => (typeof v === 'string' ? JSON.stringify(v) : (JSON.stringify(v) ?? String(v)).slice(0, 80));

interface ContainerRef {
  field: string; // e.g. spec.containers[0] "main"
  c: Obj;
  sc: unknown; // its securityContext
}

function containersOf(spec: unknown): ContainerRef[] {
  const out: ContainerRef[] = [];
  for (const list of ['initContainers', 'containers', 'ephemeralContainers']) {
    const items = own(spec, list);
    if (!Array.isArray(items)) continue;
    items.forEach((c, i) => {
      const name = own(c, 'name');
      out.push({
        field: `spec.${list}[${i}]${typeof name === 'string' ? ` "${name}"` : ''}`,
        c: isObj(c) ? c : {},
        sc: own(c, 'securityContext'),
      });
    });
  }
  return out;
}

/**
 * Checks a pod against a level. `privileged` checks nothing; `restricted` includes `baseline`.
 * Lists that are not lists where the API wants one are reported, not skipped.
 */
export function checkPod(pod: V1Pod, level: PodSecurityLevel): PolicyViolation[] {
  if (level === 'privileged') return [];
  const out: PolicyViolation[] = [];
  const spec = own(pod, 'spec');
  baseline(pod, spec, out);
  if (level === 'restricted') restricted(spec, out);
  return out;
}

function baseline(pod: V1Pod, spec: unknown, out: PolicyViolation[]): void {
  const v = (field: string, problem: string, fix: string) => out.push({ level: 'baseline', field, problem, fix });
  const podSc = own(spec, 'securityContext');
  const containers = containersOf(spec);

  for (const host of ['hostNetwork', 'hostPID', 'hostIPC']) {
    const val = own(spec, host);
    if (!unset(val) && val !== false)
      v(
        `spec.${host}`,
        `is ${show(val)}: sharing the node's ${host.slice(4)} namespace`,
        `remove ${host} (from the workflow spec or the podSpecPatch)`,
      );
  }
  const scopes: { field: string; sc: unknown }[] = [
    { field: 'spec.securityContext', sc: podSc },
    ...containers.map((r) => ({ field: `${r.field} securityContext`, sc: r.sc })),
  ];
  for (const { field, sc } of scopes) {
    const hostProcess = own(own(sc, 'windowsOptions'), 'hostProcess');
    if (!unset(hostProcess) && hostProcess !== false)
      v(`${field}.windowsOptions.hostProcess`, `is ${show(hostProcess)}`, 'remove windowsOptions.hostProcess');
    const seLinux = own(sc, 'seLinuxOptions');
    if (!unset(seLinux)) {
      const type = own(seLinux, 'type') ?? '';
      if (!SELINUX_TYPES.includes(type as string))
        v(`${field}.seLinuxOptions.type`, `is ${show(type)}`, `use one of ${SELINUX_TYPES.filter(Boolean).join(', ')} or leave it unset`);
      for (const k of ['user', 'role']) {
        const val = own(seLinux, k);
        if (!unset(val) && val !== '') v(`${field}.seLinuxOptions.${k}`, `is ${show(val)}`, `remove seLinuxOptions.${k}`);
      }
    }
    const seccomp = own(own(sc, 'seccompProfile'), 'type');
    if (!unset(seccomp) && seccomp !== 'RuntimeDefault' && seccomp !== 'Localhost')
      v(`${field}.seccompProfile.type`, `is ${show(seccomp)}`, 'use RuntimeDefault or Localhost, or leave it unset');
    const appArmor = own(own(sc, 'appArmorProfile'), 'type');
    if (!unset(appArmor) && appArmor !== 'RuntimeDefault' && appArmor !== 'Localhost')
      v(`${field}.appArmorProfile.type`, `is ${show(appArmor)}`, 'use RuntimeDefault or Localhost, or leave it unset');
  }
  const sysctls = own(podSc, 'sysctls');
  if (!unset(sysctls)) {
    if (!Array.isArray(sysctls)) v('spec.securityContext.sysctls', `is ${show(sysctls)}, not a list`, 'give a list of {name, value}');
    else
      sysctls.forEach((s, i) => {
        const name = own(s, 'name');
        if (!SAFE_SYSCTLS.includes(name as string))
          v(`spec.securityContext.sysctls[${i}].name`, `${show(name)} is not a safe sysctl`, `use only ${SAFE_SYSCTLS.join(', ')}`);
      });
  }
  for (const r of containers) {
    const privileged = own(r.sc, 'privileged');
    if (!unset(privileged) && privileged !== false)
      v(`${r.field} securityContext.privileged`, `is ${show(privileged)}`, 'remove securityContext.privileged');
    const procMount = own(r.sc, 'procMount');
    if (!unset(procMount) && procMount !== 'Default')
      v(`${r.field} securityContext.procMount`, `is ${show(procMount)}`, 'remove procMount (or set Default)');
    const add = own(own(r.sc, 'capabilities'), 'add');
    if (!unset(add)) {
      const extra = Array.isArray(add) ? add.filter((c) => !BASELINE_CAPABILITIES.includes(c as string)) : [add];
      if (extra.length)
        v(
          `${r.field} securityContext.capabilities.add`,
          `adds ${extra.map(show).join(', ')}`,
          `add only capabilities of ${BASELINE_CAPABILITIES.join(', ')}`,
        );
    }
    const ports = own(r.c, 'ports');
    if (Array.isArray(ports))
      ports.forEach((p, i) => {
        const hostPort = own(p, 'hostPort');
        if (!unset(hostPort) && hostPort !== 0)
          v(
            `${r.field} ports[${i}].hostPort`,
            `is ${show(hostPort)}: a port of the node`,
            'remove hostPort (use a Service to reach the pod)',
          );
      });
  }
  volumesOf(spec).forEach(({ field, vol }) => {
    if (!unset(own(vol, 'hostPath')))
      v(
        `${field}.hostPath`,
        `mounts ${show(own(own(vol, 'hostPath'), 'path'))} of the node`,
        'use an emptyDir, a configMap/secret or a persistentVolumeClaim instead of hostPath',
      );
  });
  const annotations = own(own(pod, 'metadata'), 'annotations');
  if (isObj(annotations)) {
    for (const [key, val] of Object.entries(annotations)) {
      if (key.startsWith(APPARMOR_ANNOTATION) && val !== 'runtime/default' && !(typeof val === 'string' && val.startsWith('localhost/'))) {
        v(`metadata.annotations["${key}"]`, `is ${show(val)}`, 'use runtime/default or localhost/<profile>, or remove the annotation');
      }
      if (SECCOMP_ANNOTATIONS.some((a) => key === a || (a.endsWith('/') && key.startsWith(a))) && val === 'unconfined') {
        v(`metadata.annotations["${key}"]`, 'is "unconfined"', 'remove the annotation');
      }
    }
  }
}

function restricted(spec: unknown, out: PolicyViolation[]): void {
  const v = (field: string, problem: string, fix: string) => out.push({ level: 'restricted', field, problem, fix });
  const podSc = own(spec, 'securityContext');
  const containers = containersOf(spec);

  volumesOf(spec).forEach(({ field, vol }) => {
    const sources = Object.keys(vol).filter((k) => k !== 'name' && !unset(vol[k]));
    const bad = sources.filter((k) => !RESTRICTED_VOLUME_SOURCES.includes(k) && k !== 'hostPath'); // hostPath: reported by baseline
    if (bad.length) v(`${field}.${bad[0]}`, `is a ${bad.join(', ')} volume`, `use only ${RESTRICTED_VOLUME_SOURCES.join(', ')} volumes`);
  });
  const podNonRoot = own(podSc, 'runAsNonRoot');
  if (!unset(podNonRoot) && podNonRoot !== true)
    v('spec.securityContext.runAsNonRoot', `is ${show(podNonRoot)}`, 'set runAsNonRoot: true (or remove it and set it on every container)');
  if (own(podSc, 'runAsUser') === 0) v('spec.securityContext.runAsUser', 'is 0 (root)', 'run as a non-zero user id');
  const podSeccomp = own(own(podSc, 'seccompProfile'), 'type');
  for (const r of containers) {
    const ape = own(r.sc, 'allowPrivilegeEscalation');
    if (ape !== false)
      v(
        `${r.field} securityContext.allowPrivilegeEscalation`,
        `is ${unset(ape) ? 'unset (allowed by default)' : show(ape)}`,
        'set securityContext.allowPrivilegeEscalation: false',
      );
    const nonRoot = own(r.sc, 'runAsNonRoot');
    if (nonRoot === false || (nonRoot !== true && podNonRoot !== true)) {
      v(
        `${r.field} securityContext.runAsNonRoot`,
        `is ${unset(nonRoot) ? 'unset (and the pod does not set it)' : show(nonRoot)}`,
        'set runAsNonRoot: true in the securityContext of the pod (workflow or template securityContext) or of the container',
      );
    }
    if (own(r.sc, 'runAsUser') === 0) v(`${r.field} securityContext.runAsUser`, 'is 0 (root)', 'run as a non-zero user id');
    const seccomp = own(own(r.sc, 'seccompProfile'), 'type');
    if (unset(seccomp) && podSeccomp !== 'RuntimeDefault' && podSeccomp !== 'Localhost') {
      v(
        `${r.field} securityContext.seccompProfile.type`,
        'is unset (and the pod does not set it)',
        'set seccompProfile: {type: RuntimeDefault} in the securityContext of the pod or of the container',
      );
    }
    const caps = own(r.sc, 'capabilities');
    const drop = own(caps, 'drop');
    if (!(Array.isArray(drop) && drop.includes('ALL')))
      v(
        `${r.field} securityContext.capabilities.drop`,
        `is ${unset(drop) ? 'unset' : show(drop)}, without "ALL"`,
        'set capabilities: {drop: [ALL]}',
      );
    const add = own(caps, 'add');
    if (!unset(add) && !(Array.isArray(add) && add.every((c) => c === 'NET_BIND_SERVICE'))) {
      v(`${r.field} securityContext.capabilities.add`, `is ${show(add)}`, 'add no capability other than NET_BIND_SERVICE');
    }
  }
}

function volumesOf(spec: unknown): { field: string; vol: Obj }[] {
  const vols = own(spec, 'volumes');
  if (!Array.isArray(vols)) return [];
  return vols.map((vol, i) => {
    const name = own(vol, 'name');
    return { field: `spec.volumes[${i}]${typeof name === 'string' ? ` "${name}"` : ''}`, vol: isObj(vol) ? vol : {} };
  });
}

/**
 * The floor of a plugin sidecar at every level: it never runs as root, privileged, with added
 * capabilities or with privilege escalation. `podSc` is the agent pod's securityContext (a
 * container value wins over it, as in Kubernetes).
 */
export function checkPluginSidecar(container: V1Container, podSc: unknown, field: string): PolicyViolation[] {
  const out: PolicyViolation[] = [];
  const v = (f: string, problem: string, fix: string) =>
    out.push({ level: 'plugin', field: `${field} securityContext.${f}`, problem, fix });
  const sc = own(container, 'securityContext');
  const eff = (k: string) => (unset(own(sc, k)) ? own(podSc, k) : own(sc, k));
  if (eff('runAsNonRoot') !== true)
    v(
      'runAsNonRoot',
      `is ${show(eff('runAsNonRoot') ?? 'unset')}`,
      "set runAsNonRoot: true in the plugin's sidecar.container (plugins never run as root)",
    );
  if (eff('runAsUser') === 0) v('runAsUser', 'is 0 (root)', 'run the plugin as a non-zero user id');
  const privileged = own(sc, 'privileged');
  if (!unset(privileged) && privileged !== false)
    v('privileged', `is ${show(privileged)}`, "remove privileged from the plugin's sidecar.container");
  const add = own(own(sc, 'capabilities'), 'add');
  if (!unset(add) && !(Array.isArray(add) && add.length === 0))
    v('capabilities.add', `is ${show(add)}`, 'remove capabilities.add: plugin sidecars get no added capabilities');
  if (own(sc, 'allowPrivilegeEscalation') !== false)
    v(
      'allowPrivilegeEscalation',
      `is ${show(own(sc, 'allowPrivilegeEscalation') ?? 'unset')}`,
      "set allowPrivilegeEscalation: false (or leave it to the agent pod's default)",
    );
  return out;
}

/**
 * Step pods may not run as the service accounts of plugflow's own pods: the agent's (it can read
 * every TaskSet of the namespace — literal HTTP header values included — and write task results)
 * and plugins' `<name>-executor-plugin` accounts. Any other account of the namespace is the
 * submitter's choice (see README "Pod security": creating workflows in a namespace means running
 * pods as its service accounts). `serviceAccount` is the deprecated alias the API still accepts.
 */
export function checkStepServiceAccount(spec: unknown, agentAccount: string, pluginSuffix: string): PolicyViolation[] {
  const out: PolicyViolation[] = [];
  for (const key of ['serviceAccountName', 'serviceAccount']) {
    const name = own(spec, key);
    if (unset(name) || name === '') continue;
    if (typeof name !== 'string') {
      out.push({ level: 'account', field: `spec.${key}`, problem: `is ${show(name)}, not a name`, fix: 'give a service account name' });
    } else if (name === agentAccount || name.endsWith(pluginSuffix)) {
      const whose = name === agentAccount ? 'the workflow agent' : 'an executor plugin';
      out.push({
        level: 'account',
        field: `spec.${key}`,
        problem: `is "${name}", the service account of ${whose}`,
        fix: 'run steps under a service account of their own (serviceAccountName of the workflow or template)',
      });
    }
  }
  return out;
}

/**
 * The controller's verdict on a pod about to be created: undefined to create it, else the
 * message its node (or, for the agent pod, its plugin steps) fails with. `extra` are checks
 * beyond the level (checkStepServiceAccount for step pods).
 */
export function podPolicyRefusal(
  subject: string,
  pod: V1Pod,
  level: PodSecurityLevel,
  source: string,
  extra: readonly PolicyViolation[] = [],
): string | undefined {
  const violations = [...extra, ...checkPod(pod, level)];
  return violations.length > 0 ? describeViolations(subject, level, source, violations) : undefined;
}

/** One line per violation, for the node's message: level, field, problem, fix. */
export function describeViolations(
  subject: string,
  level: PodSecurityLevel,
  source: string,
  violations: readonly PolicyViolation[],
): string {
  const lines = violations.map(
    (x) =>
      `${x.field} ${x.problem} (${x.level === 'plugin' ? 'plugin sidecar rule' : x.level === 'account' ? 'service account rule' : `level "${x.level}"`}; fix: ${x.fix})`,
  );
  return `${subject} breaks the pod security policy (level "${level}", from the ${source}): ${lines.join('; ')}`;
}
