/**
 * The container field set (spec document 002, "Container field set"): Kubernetes' own container
 * record, passed to the pod as written, and the three records that extend it (a script, an init
 * container or sidecar, a container of a containerSet). Declared once (record-declaration.ts);
 * the CRD keeps containers open, so each field's schema here only documents it.
 */
import type {
  ContainerPort,
  EnvFromSource,
  EnvVar,
  Lifecycle,
  Probe,
  PullPolicy,
  ResourceRequirements,
  SecurityContext,
  TerminationMessagePolicy,
  VolumeDevice,
  VolumeMount,
} from './container.js';
import { arr, bool, openObject, str } from './crd/schema-builders.js';
import { KUBE, ok } from './field-rules.js';
import { field, record, type RecordOf } from './record-declaration.js';

/** One field of the set: passed to the pod unchanged. */
function kube<T>(schema = openObject()) {
  return field<T>(schema, ok(KUBE));
}

/** The fields of the container field set (every container record has them). */
function containerFields() {
  return {
    args: kube<string[]>(arr(str())),
    command: kube<string[]>(arr(str())),
    env: kube<EnvVar[]>(arr(openObject())),
    envFrom: kube<EnvFromSource[]>(arr(openObject())),
    image: kube<string>(str()),
    imagePullPolicy: kube<PullPolicy>(str()),
    lifecycle: kube<Lifecycle>(),
    livenessProbe: kube<Probe>(),
    /** DNS_LABEL, unique within the pod. Templates may leave it out (`main` is used). */
    name: kube<string>(str()),
    ports: kube<ContainerPort[]>(arr(openObject())),
    readinessProbe: kube<Probe>(),
    resources: kube<ResourceRequirements>(),
    securityContext: kube<SecurityContext>(),
    startupProbe: kube<Probe>(),
    stdin: kube<boolean>(bool()),
    stdinOnce: kube<boolean>(bool()),
    terminationMessagePath: kube<string>(str()),
    terminationMessagePolicy: kube<TerminationMessagePolicy>(str()),
    tty: kube<boolean>(bool()),
    volumeDevices: kube<VolumeDevice[]>(arr(openObject())),
    volumeMounts: kube<VolumeMount[]>(arr(openObject())),
    workingDir: kube<string>(str()),
  };
}

export const CONTAINER_RECORD = record('Container', containerFields());
export interface Container extends RecordOf<typeof CONTAINER_RECORD.fields> {}

/** The names of the container field set. */
export const CONTAINER_FIELDS = Object.keys(CONTAINER_RECORD.fields) as ReadonlyArray<keyof Container>;

export const SCRIPT_TEMPLATE_RECORD = record('ScriptTemplate', {
  /** The script code. */
  source: field<string>(str()).required(),
  ...containerFields(),
});
export interface ScriptTemplate extends RecordOf<typeof SCRIPT_TEMPLATE_RECORD.fields> {}

/** Init containers and sidecars of a template. */
export const USER_CONTAINER_RECORD = record('UserContainer', {
  /** Mounts the main container's volumes (artifacts included) at the same paths. */
  mirrorVolumeMounts: field<boolean>(bool()),
  ...containerFields(),
});
export interface UserContainer extends RecordOf<typeof USER_CONTAINER_RECORD.fields> {}

/** A container of a containerSet template. */
export const CONTAINER_NODE_RECORD = record('ContainerNode', {
  dependencies: field<string[]>(
    arr(str()),
    ok('names of containers of the set whose command must succeed first; a container whose dependency failed does not run'),
  ),
  ...containerFields(),
});
export interface ContainerNode extends RecordOf<typeof CONTAINER_NODE_RECORD.fields> {}
