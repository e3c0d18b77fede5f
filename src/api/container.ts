/**
 * Container, volume, scheduling, security and metadata records (spec document 002).
 *
 * These are the shapes users write inside templates. They are plain JSON records: the engine
 * copies most of them into pod specs without interpreting them, so the open parts stay loosely
 * typed (vendor volume sources, LabelSelector, SecurityContext) rather than guessed.
 */
import type { IntOrString, Quantity } from './values/scalars.js';

/** String-to-string map, as the spec's `map`. */
export type StringMap = Record<string, string>;

/** An RFC 3339 timestamp as it travels in JSON. */
export type Time = string;

// ---------------------------------------------------------------------------------------------
// Metadata

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  /** Default false; setting it needs delete permission on the owner (422 otherwise). */
  blockOwnerDeletion?: boolean;
  controller?: boolean;
}

export interface ManagedFieldsEntry {
  apiVersion?: string;
  fieldsType?: string;
  fieldsV1?: Record<string, unknown>;
  manager?: string;
  operation?: string;
  subresource?: string;
  time?: Time;
}

/** Full ObjectMeta; the request form (name, namespace, uid) is a subset of it. */
export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  labels?: StringMap;
  annotations?: StringMap;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: Time;
  deletionTimestamp?: Time;
  deletionGracePeriodSeconds?: number;
  finalizers?: string[];
  ownerReferences?: OwnerReference[];
  managedFields?: ManagedFieldsEntry[];
  /** Deprecated. */
  clusterName?: string;
  /** Deprecated. */
  selfLink?: string;
}

// ---------------------------------------------------------------------------------------------
// Selectors and references

export interface LocalObjectReference {
  name?: string;
}

export interface ConfigMapKeySelector {
  key: string;
  name?: string;
  optional?: boolean;
}

export interface SecretKeySelector {
  key: string;
  name?: string;
  optional?: boolean;
}

export interface ObjectFieldSelector {
  /** Default `v1`. */
  apiVersion?: string;
  fieldPath: string;
}

export interface ResourceFieldSelector {
  /** Required for volumes, optional for env vars. */
  containerName?: string;
  divisor?: Quantity;
  resource: string;
}

export interface LabelSelectorRequirement {
  key: string;
  operator: string;
  values?: string[];
}

/** Not detailed by the spec; this is the usual Kubernetes shape. */
export interface LabelSelector {
  matchLabels?: StringMap;
  matchExpressions?: LabelSelectorRequirement[];
}

export interface TypedLocalObjectReference {
  /** Required for non-core kinds. */
  apiGroup?: string;
  kind: string;
  name: string;
}

// ---------------------------------------------------------------------------------------------
// Environment

export interface EnvVarSource {
  configMapKeyRef?: ConfigMapKeySelector;
  fieldRef?: ObjectFieldSelector;
  resourceFieldRef?: ResourceFieldSelector;
  secretKeyRef?: SecretKeySelector;
}

export interface EnvVar {
  /** C_IDENTIFIER. */
  name: string;
  value?: string;
  valueFrom?: EnvVarSource;
}

export interface ConfigMapEnvSource {
  name?: string;
  optional?: boolean;
}

export interface SecretEnvSource {
  name?: string;
  optional?: boolean;
}

export interface EnvFromSource {
  configMapRef?: ConfigMapEnvSource;
  prefix?: string;
  secretRef?: SecretEnvSource;
}

// ---------------------------------------------------------------------------------------------
// Ports, mounts, resources

export type Protocol = string;
export type PullPolicy = string;
export type TerminationMessagePolicy = string;
export type MountPropagationMode = string;
export type URIScheme = string;

export interface ContainerPort {
  /** 0 < x < 65536. */
  containerPort: number;
  hostIP?: string;
  hostPort?: number;
  /** IANA_SVC_NAME, unique in the pod. */
  name?: string;
  protocol?: Protocol;
}

export interface VolumeMount {
  /** Must not contain `:`. */
  mountPath: string;
  mountPropagation?: MountPropagationMode;
  /** Must match a volume name. */
  name: string;
  readOnly?: boolean;
  subPath?: string;
  /** Mutually exclusive with subPath. */
  subPathExpr?: string;
}

export interface VolumeDevice {
  devicePath: string;
  name: string;
}

/** Resource name (cpu, memory, ...) to Quantity. */
export type ResourceList = Record<string, Quantity>;

export interface ResourceRequirements {
  limits?: ResourceList;
  requests?: ResourceList;
  /** Not in the spec; accepted because newer Kubernetes versions have it. */
  claims?: Array<{ name: string }>;
}

// ---------------------------------------------------------------------------------------------
// Probes and lifecycle

export interface ExecAction {
  command?: string[];
}

export interface GRPCAction {
  /** 1 to 65535. */
  port: number;
  service?: string;
}

export interface HTTPGetActionHeader {
  name: string;
  value: string;
}

export interface HTTPGetAction {
  host?: string;
  httpHeaders?: HTTPGetActionHeader[];
  path?: string;
  port: IntOrString;
  scheme?: URIScheme;
}

export interface TCPSocketAction {
  host?: string;
  port: IntOrString;
}

export interface Probe {
  exec?: ExecAction;
  failureThreshold?: number;
  grpc?: GRPCAction;
  httpGet?: HTTPGetAction;
  initialDelaySeconds?: number;
  periodSeconds?: number;
  successThreshold?: number;
  tcpSocket?: TCPSocketAction;
  terminationGracePeriodSeconds?: number;
  timeoutSeconds?: number;
}

export interface LifecycleHandler {
  exec?: ExecAction;
  httpGet?: HTTPGetAction;
  tcpSocket?: TCPSocketAction;
  sleep?: { seconds: number };
}

/** Container lifecycle (fields not given by the spec; the usual Kubernetes shape). */
export interface Lifecycle {
  postStart?: LifecycleHandler;
  preStop?: LifecycleHandler;
}

// ---------------------------------------------------------------------------------------------
// Security

export interface SELinuxOptions {
  level?: string;
  role?: string;
  type?: string;
  user?: string;
}

export interface SeccompProfile {
  /** Only when type is `Localhost`. */
  localhostProfile?: string;
  type: string;
}

export interface Sysctl {
  name: string;
  value: string;
}

export interface Capabilities {
  add?: string[];
  drop?: string[];
}

export interface VendorQSecurityContextOptions {
  gmsaCredentialSpec?: string;
  gmsaCredentialSpecName?: string;
  hostProcess?: boolean;
  runAsUserName?: string;
}

export interface PodSecurityContext {
  fsGroup?: number;
  fsGroupChangePolicy?: string;
  runAsGroup?: number;
  runAsNonRoot?: boolean;
  runAsUser?: number;
  seLinuxOptions?: SELinuxOptions;
  seccompProfile?: SeccompProfile;
  supplementalGroups?: number[];
  sysctls?: Sysctl[];
  vendorQOptions?: VendorQSecurityContextOptions;
}

/**
 * Container security context. The spec does not list its fields; these are the ones plugflow
 * reads (plugin validation needs runAsNonRoot/runAsUser), the rest pass through.
 */
export interface SecurityContext {
  allowPrivilegeEscalation?: boolean;
  capabilities?: Capabilities;
  privileged?: boolean;
  procMount?: string;
  readOnlyRootFilesystem?: boolean;
  runAsGroup?: number;
  runAsNonRoot?: boolean;
  runAsUser?: number;
  seLinuxOptions?: SELinuxOptions;
  seccompProfile?: SeccompProfile;
  vendorQOptions?: VendorQSecurityContextOptions;
  [field: string]: unknown;
}

// ---------------------------------------------------------------------------------------------
// The container field set

/** Fields shared by Container, ContainerNode, ScriptTemplate and UserContainer. */
export type { Container, ContainerNode, UserContainer } from './container-records.js';

// ---------------------------------------------------------------------------------------------
// Scheduling
