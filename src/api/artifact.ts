/**
 * Artifact records (spec document 001, "Artifacts"). The engine moves artifacts around but does
 * not interpret the storage locations, so vendor locations are typed but never required.
 */
import type { ConfigMapKeySelector, SecretKeySelector } from './container.js';

/** Empty-object shape. */
export type EmptyObject = Record<string, never>;

export interface TarStrategy {
  compressionLevel?: number;
}

export interface ArchiveStrategy {
  none?: EmptyObject;
  tar?: TarStrategy;
  zip?: EmptyObject;
}

export interface ArtifactGC {
  podMetadata?: { annotations?: Record<string, string>; labels?: Record<string, string> };
  serviceAccountName?: string;
  strategy?: string;
}

export interface VendorOArtifact {
  passwordSecret?: SecretKeySelector;
  url?: string;
  usernameSecret?: SecretKeySelector;
}

export interface VendorBArtifact {
  accountKeySecret?: SecretKeySelector;
  blob?: string;
  container?: string;
  endpoint?: string;
  useSDKCreds?: boolean;
}

export interface VendorCObjectArtifact {
  bucket?: string;
  key?: string;
  serviceAccountKeySecret?: SecretKeySelector;
}

export interface VendorDLifecycleRule {
  markDeletionAfterDays?: number;
  markInfrequentAccessAfterDays?: number;
}

export interface VendorDObjectArtifact {
  accessKeySecret?: SecretKeySelector;
  bucket?: string;
  createBucketIfNotPresent?: boolean;
  endpoint?: string;
  key?: string;
  lifecycleRule?: VendorDLifecycleRule;
  secretKeySecret?: SecretKeySelector;
  securityToken?: string;
}

export interface VendorAEncryptionOptions {
  enableEncryption?: boolean;
  kmsEncryptionContext?: string;
  kmsKeyId?: string;
  serverSideCustomerKeySecret?: SecretKeySelector;
}

export interface VendorAObjectArtifact {
  accessKeySecret?: SecretKeySelector;
  bucket?: string;
  createBucketIfNotPresent?: { objectLocking?: boolean };
  encryptionOptions?: VendorAEncryptionOptions;
  endpoint?: string;
  insecure?: boolean;
  key?: string;
  region?: string;
  roleARN?: string;
  secretKeySecret?: SecretKeySelector;
  useSDKCreds?: boolean;
}

export interface GitArtifact {
  branch?: string;
  depth?: number;
  disableSubmodules?: boolean;
  fetch?: string[];
  insecureIgnoreHostKey?: boolean;
  passwordSecret?: SecretKeySelector;
  repo: string;
  revision?: string;
  singleBranch?: boolean;
  sshPrivateKeySecret?: SecretKeySelector;
  usernameSecret?: SecretKeySelector;
}

export interface HDFSArtifact {
  addresses?: string[];
  force?: boolean;
  hdfsUser?: string;
  krbCCacheSecret?: SecretKeySelector;
  krbConfigConfigMap?: ConfigMapKeySelector;
  krbKeytabSecret?: SecretKeySelector;
  krbRealm?: string;
  krbServicePrincipalName?: string;
  krbUsername?: string;
  path: string;
}

export interface HTTPArtifactHeader {
  name: string;
  value: string;
}

export interface HTTPAuth {
  basicAuth?: { passwordSecret?: SecretKeySelector; usernameSecret?: SecretKeySelector };
  clientCert?: { clientCertSecret?: SecretKeySelector; clientKeySecret?: SecretKeySelector };
  oauth2?: {
    clientIDSecret?: SecretKeySelector;
    clientSecretSecret?: SecretKeySelector;
    endpointParams?: Array<{ key: string; value?: string }>;
    scopes?: string[];
    tokenURLSecret?: SecretKeySelector;
  };
}

export interface HTTPArtifact {
  auth?: HTTPAuth;
  headers?: HTTPArtifactHeader[];
  url: string;
}

export interface RawArtifact {
  data: string;
}

/** An artifact kept by an artifact driver plugin (the name an operator registered it under). */
export interface PluginArtifact {
  name?: string;
  /** Free-form settings for the driver, passed as written. */
  configuration?: string;
  connectionTimeoutSeconds?: number;
  key?: string;
}

/** Where an artifact lives (or the default archive location of a step). */
export interface ArtifactLocation {
  archiveLogs?: boolean;
  vendorO?: VendorOArtifact;
  vendorB?: VendorBArtifact;
  vendorCObject?: VendorCObjectArtifact;
  git?: GitArtifact;
  hdfs?: HDFSArtifact;
  http?: HTTPArtifact;
  vendorDObject?: VendorDObjectArtifact;
  raw?: RawArtifact;
  vendorAObject?: VendorAObjectArtifact;
  plugin?: PluginArtifact;
}

export interface Artifact extends ArtifactLocation {
  /** Unique within a template's inputs/outputs. */
  name: string;
  archive?: ArchiveStrategy;
  artifactGC?: ArtifactGC;
  deleted?: boolean;
  /** Refers to an artifact of a previous step. */
  from?: string;
  fromExpression?: string;
  globalName?: string;
  /** 0 to 0777, applied when loading input artifacts. */
  mode?: number;
  optional?: boolean;
  /** Container path. */
  path?: string;
  recurseMode?: boolean;
  subPath?: string;
}

/** Same fields as Artifact (the source of a data template). */
export type ArtifactPaths = Artifact;
