/**
 * Where a stored artifact's bytes are (object store, blob store, GCS), as the pod side needs it:
 * credentials as the names of the environment variables their Secrets become.
 */
import type { Artifact, VendorAObjectArtifact } from '../api/index.js';
import { ArtifactPlanError } from './plan-error.js';
import type { SecretEnvs } from './secret-envs.js';

/** Where the bytes of one artifact are in an object store, with credentials as variable names. */
export interface StoreLocation {
  bucket: string;
  key: string;
  endpoint: string;
  region?: string;
  insecure?: boolean;
  createBucketIfNotPresent?: boolean;
  /** Environment variables holding the access and secret key (absent: anonymous access). */
  accessKeyEnv?: string;
  secretKeyEnv?: string;
}

/** Where the bytes of one artifact are in a blob store (`vendorB`), the account key as a variable name. */
export interface BlobLocation {
  kind: 'blob';
  endpoint: string;
  container: string;
  blob: string;
  accountKeyEnv?: string;
}

/** Where the bytes of one artifact are in GCS (`vendorCObject`), the key file as a variable name. */
export interface GcsLocation {
  kind: 'gcs';
  bucket: string;
  key: string;
  /** A GCS-compatible server instead of storage.googleapis.com (PLUGFLOW_GCS_ENDPOINT). */
  endpoint?: string;
  serviceAccountKeyEnv?: string;
}

/** A stored artifact's place: an object store (S3 protocol), a blob store or GCS. */
export type StoredLocation = StoreLocation | BlobLocation | GcsLocation;

export function isBlob(loc: StoredLocation): loc is BlobLocation {
  return (loc as BlobLocation).kind === 'blob';
}

export function isGcs(loc: StoredLocation): loc is GcsLocation {
  return (loc as GcsLocation).kind === 'gcs';
}

/** `s3://bucket/key at endpoint`, `blob://container/blob at endpoint`, `gs://bucket/key`; never credentials. */
export function describeStored(loc: StoredLocation): string {
  if (isBlob(loc)) return `blob://${loc.container}/${loc.blob} at ${loc.endpoint}`;
  if (isGcs(loc)) return `gs://${loc.bucket}/${loc.key}${loc.endpoint ? ` at ${loc.endpoint}` : ''}`;
  return `s3://${loc.bucket}/${loc.key} at ${loc.endpoint}`;
}

/** The stored location of a record (vendorB or vendorAObject), credentials as variables. */
export function storedLocation(
  a: Pick<Artifact, 'vendorAObject' | 'vendorB' | 'vendorCObject'>,
  secrets: SecretEnvs,
  field: string,
  gcsEndpoint: string | undefined,
): StoredLocation {
  if (a.vendorCObject) {
    const c = a.vendorCObject;
    if (!c.bucket)
      throw new ArtifactPlanError(`${field}.vendorCObject needs bucket, or an artifact repository to take it from (only key is given)`);
    if (!c.key) throw new ArtifactPlanError(`${field}.vendorCObject.key is required`);
    const out: GcsLocation = { kind: 'gcs', bucket: c.bucket, key: c.key };
    if (gcsEndpoint) out.endpoint = gcsEndpoint;
    if (c.serviceAccountKeySecret)
      out.serviceAccountKeyEnv = secrets.env(c.serviceAccountKeySecret, `${field}.vendorCObject.serviceAccountKeySecret`);
    return out;
  }
  if (!a.vendorB) return storeLocation(a.vendorAObject ?? {}, secrets, field);
  const b = a.vendorB;
  if (!b.endpoint || !b.container)
    throw new ArtifactPlanError(
      `${field}.vendorB needs endpoint and container, or an artifact repository to take them from (only blob is given)`,
    );
  if (!b.blob) throw new ArtifactPlanError(`${field}.vendorB.blob is required`);
  const out: BlobLocation = { kind: 'blob', endpoint: b.endpoint, container: b.container, blob: b.blob };
  if (b.accountKeySecret) out.accountKeyEnv = secrets.env(b.accountKeySecret, `${field}.vendorB.accountKeySecret`);
  return out;
}

function storeLocation(loc: VendorAObjectArtifact, secrets: SecretEnvs, field: string): StoreLocation {
  if (!loc.bucket || !loc.endpoint)
    throw new ArtifactPlanError(
      `${field}.vendorAObject needs bucket and endpoint, or an artifact repository to take them from (only key is given)`,
    );
  if (!loc.key) throw new ArtifactPlanError(`${field}.vendorAObject.key is required`);
  const out: StoreLocation = { bucket: loc.bucket, key: loc.key, endpoint: loc.endpoint };
  if (loc.region) out.region = loc.region;
  if (loc.insecure !== undefined) out.insecure = loc.insecure;
  if (loc.createBucketIfNotPresent) out.createBucketIfNotPresent = true;
  if (loc.accessKeySecret) out.accessKeyEnv = secrets.env(loc.accessKeySecret, `${field}.vendorAObject.accessKeySecret`);
  if (loc.secretKeySecret) out.secretKeyEnv = secrets.env(loc.secretKeySecret, `${field}.vendorAObject.secretKeySecret`);
  return out;
}
