/**
 * Volume records (spec document 002): `Volume` with exactly one source, and the source shapes.
 * Split from container.ts so each file holds one concept; vendor sources stay loosely typed.
 */
import type {
  LabelSelector,
  LocalObjectReference,
  ObjectFieldSelector,
  ObjectMeta,
  ResourceFieldSelector,
  ResourceRequirements,
  StringMap,
  TypedLocalObjectReference,
} from './container.js';
import type { Quantity } from './values/scalars.js';

// ---------------------------------------------------------------------------------------------
// Volumes

export interface KeyToPath {
  key: string;
  mode?: number;
  path: string;
}

export interface ConfigMapVolumeSource {
  defaultMode?: number;
  items?: KeyToPath[];
  name?: string;
  optional?: boolean;
}

export interface SecretVolumeSource {
  defaultMode?: number;
  items?: KeyToPath[];
  secretName?: string;
  optional?: boolean;
}

export interface DownwardAPIVolumeFile {
  fieldRef?: ObjectFieldSelector;
  mode?: number;
  path: string;
  resourceFieldRef?: ResourceFieldSelector;
}

export interface DownwardAPIVolumeSource {
  defaultMode?: number;
  items?: DownwardAPIVolumeFile[];
}

export interface EmptyDirVolumeSource {
  medium?: string;
  sizeLimit?: Quantity;
}

export interface PersistentVolumeClaimSpec {
  accessModes?: string[];
  dataSource?: TypedLocalObjectReference;
  dataSourceRef?: TypedLocalObjectReference;
  resources?: ResourceRequirements;
  selector?: LabelSelector;
  storageClassName?: string;
  volumeMode?: string;
  volumeName?: string;
}

export interface PersistentVolumeClaimTemplate {
  metadata?: ObjectMeta;
  spec: PersistentVolumeClaimSpec;
}

export interface EphemeralVolumeSource {
  volumeClaimTemplate?: PersistentVolumeClaimTemplate;
}

export interface PersistentVolumeClaimVolumeSource {
  claimName: string;
  readOnly?: boolean;
}

export interface HostPathVolumeSource {
  path: string;
  type?: string;
}

export interface NFSVolumeSource {
  path: string;
  readOnly?: boolean;
  server: string;
}

export interface CSIVolumeSource {
  driver: string;
  fsType?: string;
  nodePublishSecretRef?: LocalObjectReference;
  readOnly?: boolean;
  volumeAttributes?: StringMap;
}

export interface ServiceAccountTokenProjection {
  audience?: string;
  expirationSeconds?: number;
  path: string;
}

export interface VolumeProjection {
  configMap?: { items?: KeyToPath[]; name?: string; optional?: boolean };
  downwardAPI?: { items?: DownwardAPIVolumeFile[] };
  secret?: { items?: KeyToPath[]; name?: string; optional?: boolean };
  serviceAccountToken?: ServiceAccountTokenProjection;
}

export interface ProjectedVolumeSource {
  defaultMode?: number;
  sources?: VolumeProjection[];
}

export interface GitRepoVolumeSource {
  directory?: string;
  repository: string;
  revision?: string;
}

/** Loosely typed volume source: the engine passes these through to the pod untouched. */
export type OpaqueVolumeSource = Record<string, unknown>;

/** A volume: a DNS_LABEL name plus exactly one source. */
export interface Volume {
  name: string;
  configMap?: ConfigMapVolumeSource;
  csi?: CSIVolumeSource;
  downwardAPI?: DownwardAPIVolumeSource;
  emptyDir?: EmptyDirVolumeSource;
  ephemeral?: EphemeralVolumeSource;
  gitRepo?: GitRepoVolumeSource;
  hostPath?: HostPathVolumeSource;
  nfs?: NFSVolumeSource;
  persistentVolumeClaim?: PersistentVolumeClaimVolumeSource;
  projected?: ProjectedVolumeSource;
  secret?: SecretVolumeSource;
  fc?: OpaqueVolumeSource;
  flexVolume?: OpaqueVolumeSource;
  iscsi?: OpaqueVolumeSource;
  rbd?: OpaqueVolumeSource;
  vendorAElasticBlockStore?: OpaqueVolumeSource;
  vendorBDisk?: OpaqueVolumeSource;
  vendorBFile?: OpaqueVolumeSource;
  vendorEfs?: OpaqueVolumeSource;
  vendorF?: OpaqueVolumeSource;
  vendorN?: OpaqueVolumeSource;
  vendorCPersistentDisk?: OpaqueVolumeSource;
  vendorGFs?: OpaqueVolumeSource;
  vendorL?: OpaqueVolumeSource;
  vendorM?: OpaqueVolumeSource;
  vendorH?: OpaqueVolumeSource;
  vendorI?: OpaqueVolumeSource;
  vendorJ?: OpaqueVolumeSource;
  vendorK?: OpaqueVolumeSource;
}
