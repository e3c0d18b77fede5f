/**
 * The pod of a container or script step (issue 4). Pure: the same inputs always give the same
 * pod, so a create retried after a lost reply finds an identical pod under the same name (the
 * engine chooses the name) and the caller can treat "already exists" as done.
 *
 * The pod layout and how outputs travel are described in layout.ts. What this file decides:
 *   - the user's command and args go to the main container unchanged behind the emissary, so
 *     the kubelet expands `$(VAR)` in them exactly as it would without plugflow; generated values
 *     that must reach the process literally (script source, JSON) are escaped with escapeVars;
 *   - the script source travels in env PLUGFLOW_SCRIPT and its path is placed explicitly in argv
 *     (command, script path, args), so the pod spec shows the real command line;
 *   - workflow-level settings (spec.nodeSelector, affinity, tolerations, securityContext,
 *     podMetadata, volumes, podResources, resourceClaims, podSpecPatch, ...) apply first, the
 *     template's win over them;
 *   - automountServiceAccountToken is false unless asked for (the pod makes no API calls).
 * What may be in the pod at all is not decided here: the controller checks the built pod
 * against the pod policy (pod-policy.ts) before creating it.
 */
import { argvFor, type ImageCommands } from './image-commands.js';
import type { V1Container, V1EnvVar, V1Pod, V1PodSpec, V1SecurityContext, V1Volume, V1VolumeMount } from '@kubernetes/client-node';
import {
  API_VERSION,
  LABEL_COMPONENT,
  LABEL_NODE_ID,
  LABEL_SHARD_BUCKET,
  LABEL_WORKFLOW,
  shardBucketLabel,
  type Container,
  type Template,
  type UserContainer,
  type Workflow,
} from '../api/index.js';
import { escapeVars } from './expand-vars.js';
import type { DataPlan } from '../artifacts/plan.js';
import { ANNOTATION_CONTAINER_SET, buildSetContainers } from './container-set.js';
import {
  ANNOTATION_OUTPUT_ARTIFACTS,
  COMPONENT_STEP,
  EMISSARY_PATH,
  ENV_ARCHIVE_LOGS,
  ENV_DATA,
  ENV_INPUT_ARTIFACTS,
  ENV_OUTPUT_ARTIFACTS,
  ENV_OUTPUTS,
  ENV_PACK_ARTIFACTS,
  ENV_SCRIPT,
  INPUT_ARTIFACTS_DIR,
  SCRIPT_PATH,
  VAR_DIR,
  VAR_VOLUME,
  type OutputFileSpec,
} from './layout.js';
import { INIT_CONTAINER, MAIN_CONTAINER, RESERVED_CONTAINER_NAMES, WAIT_CONTAINER } from '../api/index.js';
import { mergePodSpecPatch, parsePodSpecPatch } from './pod-spec-patch.js';
import type { ArtifactPlan } from '../artifacts/plan.js';
import type { ArtifactDriver } from '../artifacts/drivers.js';
import { withArtifactDrivers } from './artifact-drivers.js';
import { activeDeadline, concat, merged } from './pod-fields.js';

export interface StepPodInput {
  workflow: Workflow;
  nodeId: string;
  podName: string;
  /** A template with a `container` or `script` section, parameters already substituted. */
  template: Template;
  /**
   * The workflow's `spec.podSpecPatch` as the engine rendered it for this pod (createPod action);
   * the unrendered one in `workflow.spec` is never applied (its tags would reach the API server).
   */
  workflowPodSpecPatch?: string;
  /** Image of the init and wait containers (it provides `plugflow` and the emissary). */
  executorImage: string;
  /** Overrides the template's and the workflow's service account. */
  serviceAccountName?: string;
  /** What the pod does with artifacts (src/artifacts/plan.ts); none when absent. */
  artifacts?: ArtifactPlan;
  /** ENTRYPOINT and CMD of the images of containers without a command (image-commands.ts). */
  imageCommands?: ImageCommands;
  /** The artifact drivers the controller runs; those the plan uses get their containers (artifact-drivers.ts). */
  artifactDrivers?: readonly ArtifactDriver[];
}

/** Name of the PVC the controller creates for a workflow's `volumeClaimTemplates` entry. */
export function claimNameFor(workflowName: string, claimTemplateName: string): string {
  return `${workflowName}-${claimTemplateName}`;
}

export function buildStepPod(input: StepPodInput): V1Pod {
  const { workflow, template } = input;
  const where = `template "${template.name}"`;
  const wfName = workflow.metadata.name;
  const namespace = workflow.metadata.namespace;
  if (!wfName || !workflow.metadata.uid)
    throw new Error(`workflow ${wfName ?? '(unnamed)'}: metadata.name and metadata.uid are needed to own its pods`);
  if (!namespace) throw new Error(`workflow ${wfName}: metadata.namespace is needed to create its pods`);
  const body =
    template.script ??
    template.container ??
    (template.data ? dataContainer(input, where) : template.resource?.manifestFrom ? manifestContainer(input, where) : undefined);
  const set = template.containerSet;
  if (!body && !set)
    throw new Error(`${where}: a step pod needs a container, script, containerSet or data section (this template has none)`);
  const field = template.script ? 'script' : template.data ? 'data' : template.resource ? 'resource' : 'container';
  if (body && !body.image) throw new Error(`${where}: ${field}.image is required`);

  const outputs = outputFiles(template);
  const plan = input.artifacts;
  let members: V1Container[];
  let main: V1Container;
  if (set) {
    const images = input.imageCommands;
    const built = buildSetContainers(
      set,
      where,
      (c, f) => mainContainer(template, c, f, outputs, where, images),
      (c, what) => argvFor(c, what, images),
      copyContainerFields,
    );
    members = built.containers;
    main = built.main ?? built.containers[0]!;
    if (!built.main && (plan?.packs.length || plan?.logFile || plan?.inputs.length || outputs.length))
      throw new Error(`${where}: inputs and outputs of a containerSet go through its container named main, and it has none`);
  } else {
    main = mainContainer(template, body!, field, outputs, where, input.imageCommands);
    members = [main];
  }
  if (plan?.packs.length) main.env!.push({ name: ENV_PACK_ARTIFACTS, value: escapeVars(JSON.stringify(plan.packs)) });
  if (plan?.logFile) main.env!.push({ name: ENV_ARCHIVE_LOGS, value: escapeVars(plan.logFile) });
  for (const a of plan?.inputs ?? [])
    main.volumeMounts!.push({ name: VAR_VOLUME, mountPath: a.path, subPath: `${INPUT_ARTIFACTS_DIR}/${a.name}` });
  const secretEnv: V1EnvVar[] = (plan?.secrets ?? []).map((s) => ({
    name: s.env,
    valueFrom: { secretKeyRef: { name: s.ref.name, key: s.ref.key } },
  }));
  const initEnv: V1EnvVar[] = plan?.inputs.length
    ? [{ name: ENV_INPUT_ARTIFACTS, value: escapeVars(JSON.stringify(plan.inputs)) }, ...secretEnv]
    : [];
  const waitEnv: V1EnvVar[] = outputs.length ? [{ name: ENV_OUTPUTS, value: escapeVars(JSON.stringify(outputs)) }] : [];
  if (plan?.outputs.length) waitEnv.push({ name: ENV_OUTPUT_ARTIFACTS, value: escapeVars(JSON.stringify(plan.outputs)) }, ...secretEnv);
  const wfSpec = workflow.spec;
  const podMeta = wfSpec.podMetadata ?? {};

  let spec: V1PodSpec = {
    restartPolicy: 'Never',
    initContainers: [
      {
        name: INIT_CONTAINER,
        image: input.executorImage,
        command: ['plugflow', 'executor', 'install', VAR_DIR],
        ...(initEnv.length ? { env: initEnv } : {}),
        volumeMounts: [{ name: VAR_VOLUME, mountPath: VAR_DIR }],
        terminationMessagePolicy: 'FallbackToLogsOnError',
        securityContext: executorSecurity(),
      },
      ...(template.initContainers ?? []).map((c, i) => userContainer(c, `initContainers[${i}]`, main, where, false)),
    ],
    containers: [
      ...members,
      {
        name: WAIT_CONTAINER,
        image: input.executorImage,
        command: ['plugflow', 'executor', 'wait'],
        env: waitEnv,
        volumeMounts: [{ name: VAR_VOLUME, mountPath: VAR_DIR, readOnly: true }],
        terminationMessagePolicy: 'File',
        securityContext: executorSecurity(),
      },
      ...(template.sidecars ?? []).map((c, i) => userContainer(c, `sidecars[${i}]`, main, where, true, input.imageCommands)),
    ],
    volumes: volumes(workflow, template),
  };
  assertUniqueNames(spec, where);

  const serviceAccountName = input.serviceAccountName ?? template.serviceAccountName ?? wfSpec.serviceAccountName;
  // Step pods make no API calls (the init and wait containers only touch the shared volume), so
  // they get no service account token unless the template or workflow asks for one explicitly.
  const automount = template.automountServiceAccountToken ?? wfSpec.automountServiceAccountToken ?? false;
  const deadline = activeDeadline(template, where);
  const optional: Partial<V1PodSpec> = {
    serviceAccountName,
    automountServiceAccountToken: automount,
    nodeSelector: merged(wfSpec.nodeSelector, template.nodeSelector),
    affinity: (template.affinity ?? wfSpec.affinity) as V1PodSpec['affinity'],
    tolerations: (template.tolerations ?? wfSpec.tolerations) as V1PodSpec['tolerations'],
    securityContext: (template.securityContext ?? wfSpec.securityContext) as V1PodSpec['securityContext'],
    schedulerName: template.schedulerName ?? wfSpec.schedulerName,
    priorityClassName: template.priorityClassName ?? wfSpec.podPriorityClassName,
    hostAliases: concat(wfSpec.hostAliases, template.hostAliases) as V1PodSpec['hostAliases'],
    imagePullSecrets: wfSpec.imagePullSecrets as V1PodSpec['imagePullSecrets'],
    hostNetwork: wfSpec.hostNetwork,
    dnsPolicy: wfSpec.dnsPolicy,
    dnsConfig: wfSpec.dnsConfig as V1PodSpec['dnsConfig'],
    activeDeadlineSeconds: deadline,
    // Pod-level resources and DRA claims: the template's replace the workflow's (never merged).
    resources: structuredClone(template.podResources ?? wfSpec.podResources) as V1PodSpec['resources'],
    resourceClaims: structuredClone(
      template.resourceClaims?.length ? template.resourceClaims : wfSpec.resourceClaims?.length ? wfSpec.resourceClaims : undefined,
    ),
  };
  for (const [k, v] of Object.entries(optional)) if (v !== undefined) (spec as unknown as Record<string, unknown>)[k] = v;

  if (input.workflowPodSpecPatch)
    spec = mergePodSpecPatch(spec, parsePodSpecPatch(input.workflowPodSpecPatch, `workflow ${wfName}: spec.podSpecPatch`));
  if (template.podSpecPatch) spec = mergePodSpecPatch(spec, parsePodSpecPatch(template.podSpecPatch, `${where}: podSpecPatch`));
  // After the patches: what the driver containers get (no token, no shared volume) is not patched.
  if (plan?.drivers?.length) {
    spec = withArtifactDrivers(spec, plan.drivers, input.artifactDrivers ?? [], where);
    assertUniqueNames(spec, where);
  }

  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: input.podName,
      namespace,
      labels: {
        ...podMeta.labels,
        ...template.metadata?.labels,
        [LABEL_WORKFLOW]: wfName,
        [LABEL_SHARD_BUCKET]: shardBucketLabel(namespace!, wfName),
        [LABEL_NODE_ID]: input.nodeId,
        [LABEL_COMPONENT]: COMPONENT_STEP,
      },
      annotations: {
        ...podMeta.annotations,
        ...template.metadata?.annotations,
        'kubectl.kubernetes.io/default-container': main.name,
        ...(set ? { [ANNOTATION_CONTAINER_SET]: JSON.stringify(members.map((c) => c.name)) } : {}),
        ...(plan?.outputs.length ? { [ANNOTATION_OUTPUT_ARTIFACTS]: JSON.stringify(plan.outputs.map((o) => o.record)) } : {}),
      },
      ownerReferences: [
        { apiVersion: API_VERSION, kind: 'Workflow', name: wfName, uid: workflow.metadata.uid, controller: true, blockOwnerDeletion: true },
      ],
    },
    spec,
  };
}

/**
 * The main container of a data template: the plugflow image lists the objects and applies the
 * transformation (src/pod-side/data.ts); the store's credentials come from its Secrets, as the
 * init and wait containers get them.
 */
function dataContainer(input: StepPodInput, where: string): Container {
  const plan = input.artifacts;
  if (!plan?.listing)
    throw new Error(`${where}: data.source.artifactPaths names no store to list, and there is no artifact repository to take one from`);
  const data: DataPlan = { listing: plan.listing, transformation: input.template.data?.transformation ?? [] };
  return {
    name: MAIN_CONTAINER,
    image: input.executorImage,
    command: ['plugflow', 'executor', 'data'],
    env: [
      { name: ENV_DATA, value: escapeVars(JSON.stringify(data)) },
      ...plan.secrets.map((s) => ({ name: s.env, valueFrom: { secretKeyRef: { name: s.ref.name, key: s.ref.key } } })),
    ],
    securityContext: executorSecurity() as Container['securityContext'],
  };
}

/**
 * The main container of a resource template's manifest pod (src/engine/execute-resource.ts): the
 * plugflow image prints the input artifact `manifestFrom.artifact` names, placed at its path.
 */
function manifestContainer(input: StepPodInput, where: string): Container {
  const name = input.template.resource!.manifestFrom!.artifact?.name;
  const artifact = input.template.inputs?.artifacts?.find((a) => a.name === name);
  if (!artifact?.path) throw new Error(`${where}: resource.manifestFrom.artifact names no input artifact with a path`);
  return {
    name: MAIN_CONTAINER,
    image: input.executorImage,
    command: ['plugflow', 'executor', 'manifest', artifact.path],
    securityContext: executorSecurity() as Container['securityContext'],
  };
}

/**
 * plugflow's own init and wait containers need no privilege: they copy a file into the shared
 * emptyDir and read world-readable files from it. Hardened as the "restricted" pod security
 * level asks of every container, so a pod there only needs the user's own settings (its user
 * and seccomp profile at pod level, its containers' capabilities and escalation).
 */
function executorSecurity(): V1SecurityContext {
  return { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } };
}

/** Output parameters read from files of the main container. */
function outputFiles(template: Template): OutputFileSpec[] {
  const out: OutputFileSpec[] = [];
  for (const p of template.outputs?.parameters ?? []) {
    const path = p.valueFrom?.path;
    if (!path) continue;
    const def = p.valueFrom?.default;
    out.push({ name: p.name, path, ...(def !== undefined ? { default: String(def) } : {}) });
  }
  return out;
}

function mainContainer(
  template: Template,
  body: Container,
  field: string,
  outputs: OutputFileSpec[],
  where: string,
  images: ImageCommands | undefined,
): V1Container {
  const source = template.script?.source;
  let command: string[];
  let args: string[];
  if (template.script) {
    if (!body.command?.length) throw new Error(`${where}: script.command is required (the interpreter, for example [python] or [sh])`);
    command = body.command;
    args = [SCRIPT_PATH, ...(body.args ?? [])];
  } else {
    ({ command, args } = argvFor(body, `${where}: ${field}`, images));
  }
  const env: V1EnvVar[] = [...((body.env ?? []) as V1EnvVar[])];
  if (source !== undefined) env.push({ name: ENV_SCRIPT, value: escapeVars(source) });
  if (outputs.length) env.push({ name: ENV_OUTPUTS, value: escapeVars(JSON.stringify(outputs.map(({ name, path }) => ({ name, path })))) });
  const mounts = (body.volumeMounts ?? []) as V1VolumeMount[];
  if (mounts.some((m) => m.mountPath.replace(/\/+$/, '') === VAR_DIR))
    throw new Error(`${where}: ${field}.volumeMounts may not use ${VAR_DIR}, plugflow mounts its own volume there`);
  return {
    ...copyContainerFields(body),
    name: MAIN_CONTAINER,
    command: [EMISSARY_PATH, '--', ...command],
    args,
    env,
    volumeMounts: [...mounts, { name: VAR_VOLUME, mountPath: VAR_DIR }],
  };
}

/** An init container or sidecar of the template; sidecars run under the emissary. */
function userContainer(
  c: UserContainer,
  field: string,
  main: V1Container,
  where: string,
  sidecar: boolean,
  images?: ImageCommands,
): V1Container {
  if (!c.name) throw new Error(`${where}: ${field}.name is required`);
  if (RESERVED_CONTAINER_NAMES.includes(c.name))
    throw new Error(`${where}: ${field}.name "${c.name}" is reserved by plugflow (${RESERVED_CONTAINER_NAMES.join(', ')})`);
  if (!c.image) throw new Error(`${where}: ${field}.image is required`);
  let mounts = [...((c.volumeMounts ?? []) as V1VolumeMount[])];
  if (c.mirrorVolumeMounts) {
    const taken = new Set(mounts.map((m) => m.mountPath));
    for (const m of main.volumeMounts ?? []) if (m.name !== VAR_VOLUME && !taken.has(m.mountPath)) mounts.push(m);
  }
  const out: V1Container = { ...copyContainerFields(c), name: c.name };
  if (sidecar) {
    const { command, args } = argvFor(c, `${where}: ${field}`, images);
    out.command = [EMISSARY_PATH, '--sidecar', '--', ...command];
    out.args = args;
    mounts = [...mounts, { name: VAR_VOLUME, mountPath: VAR_DIR, readOnly: true }];
  }
  if (mounts.length) out.volumeMounts = mounts;
  return out;
}

/** The container field set (spec 002) carried over as written; plugflow-only fields dropped. */
function copyContainerFields(c: Container & { mirrorVolumeMounts?: boolean; dependencies?: string[]; source?: string }): V1Container {
  const { mirrorVolumeMounts: _m, dependencies: _d, source: _s, ...rest } = c;
  return structuredClone(rest) as V1Container;
}

function volumes(workflow: Workflow, template: Template): V1Volume[] {
  const byName = new Map<string, V1Volume>();
  byName.set(VAR_VOLUME, { name: VAR_VOLUME, emptyDir: {} });
  for (const t of workflow.spec.volumeClaimTemplates ?? []) {
    const name = t.metadata?.name;
    if (name) byName.set(name, { name, persistentVolumeClaim: { claimName: claimNameFor(workflow.metadata.name!, name) } });
  }
  for (const v of [...(workflow.spec.volumes ?? []), ...(template.volumes ?? [])]) {
    if (v.name === VAR_VOLUME) throw new Error(`template "${template.name}": volume name "${VAR_VOLUME}" is reserved by plugflow`);
    byName.set(v.name, structuredClone(v) as V1Volume);
  }
  return [...byName.values()];
}

function assertUniqueNames(spec: V1PodSpec, where: string): void {
  const seen = new Set<string>();
  for (const c of [...(spec.initContainers ?? []), ...spec.containers]) {
    if (seen.has(c.name))
      throw new Error(`${where}: container name "${c.name}" is used twice (init containers and sidecars share one namespace of names)`);
    seen.add(c.name);
  }
}
