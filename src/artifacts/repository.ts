/**
 * Artifact repositories: where output artifacts go when a template does not say.
 *
 * A repository is one data key of a ConfigMap, holding YAML with one store record
 * (`vendorAObject`, or `s3` as the peer writes it; `vendorB`; `vendorCObject`; or `plugin`, an
 * artifact driver with its configuration and key format) plus `archiveLogs`. Which one a workflow uses:
 *   1. `spec.artifactRepositoryRef: {configMap, key}` — that ConfigMap in the workflow's namespace
 *      (configMap defaults to `artifact-repositories`, key to the ConfigMap's default);
 *   2. else the ConfigMap `artifact-repositories` of the workflow's namespace, when it exists;
 *   3. else the same ConfigMap in the controller's namespace (the controller-wide default).
 * The key within a ConfigMap: the one named, else the annotation
 * `workflows.plugflow.io/default-artifact-repository`, else the only key.
 *
 * Pure: the controller reads the ConfigMaps and passes them in. Credentials are only ever
 * Secret references here; the controller never reads a Secret.
 */
import { LABEL_PREFIX, type VendorAObjectArtifact, type VendorBArtifact, type VendorCObjectArtifact } from '../api/index.js';
import { readYamlDocument } from '../yaml/kube-yaml.js';

export const REPOSITORIES_CONFIGMAP = 'artifact-repositories';
export const ANNOTATION_DEFAULT_REPOSITORY = `${LABEL_PREFIX}default-artifact-repository`;
/**
 * The default key format: one directory per pod, under the workflow's namespace. (The peer's is
 * `{{workflow.name}}/{{pod.name}}`; without the namespace, same-named workflows of two namespaces
 * — cron runs too — sharing the controller-wide repository overwrite and collect each other's.)
 */
export const DEFAULT_KEY_FORMAT = '{{workflow.namespace}}/{{workflow.name}}/{{pod.name}}';

/**
 * The key format actually used: a repository that is not the workflow's namespace's own (the
 * controller-wide default, shared by every namespace) keeps each namespace under its own prefix
 * even when its configured format does not say `{{workflow.namespace}}`.
 */
export function namespacedKeyFormat(format: string, repository: Pick<ArtifactRepository, 'source'> | undefined, namespace: string): string {
  if (!repository || repository.source.startsWith(`${namespace}/`) || /\{\{\s*workflow\.namespace\s*\}\}/.test(format)) return format;
  return `{{workflow.namespace}}/${format}`;
}

/** An object store as a repository: the location fields plus the key format. */
export interface ObjectStoreRepository extends VendorAObjectArtifact {
  keyFormat?: string;
}

/** A blob store as a repository: the location fields plus the blob name format. */
export interface BlobStoreRepository extends VendorBArtifact {
  blobNameFormat?: string;
}

/** GCS as a repository: the bucket, credentials and the key format. */
export interface GcsRepository extends VendorCObjectArtifact {
  keyFormat?: string;
}

/** An artifact driver plugin as a repository: its name, its configuration and the key format. */
export interface PluginRepository {
  name: string;
  configuration: string;
  keyFormat?: string;
}

/** One repository: an object store (vendorAObject), a blob store (vendorB), GCS (vendorCObject) or a driver (plugin). */
export interface ArtifactRepository {
  vendorAObject?: ObjectStoreRepository;
  vendorB?: BlobStoreRepository;
  vendorCObject?: GcsRepository;
  plugin?: PluginRepository;
  /** Save the main container's log of every step as artifact `main-logs`. */
  archiveLogs?: boolean;
  /** Where it was found, for messages and status: `namespace/configmap#key`. */
  source: string;
}

export interface RepositoryConfigMap {
  metadata?: { name?: string; namespace?: string; annotations?: Record<string, string> };
  data?: Record<string, string>;
}

export class RepositoryError extends Error {}

const REPOSITORY_FIELDS = new Set(['vendorAObject', 's3', 'vendorB', 'azure', 'vendorCObject', 'gcs', 'plugin', 'archiveLogs']);
const GCS_FIELDS = new Set(['bucket', 'keyFormat', 'serviceAccountKeySecret', 'keyPrefix']);
const BLOB_FIELDS = new Set(['endpoint', 'container', 'accountKeySecret', 'blobNameFormat']);
const STORE_FIELDS = new Set([
  'bucket',
  'endpoint',
  'region',
  'insecure',
  'accessKeySecret',
  'secretKeySecret',
  'keyFormat',
  'createBucketIfNotPresent',
  'keyPrefix',
]);

/** Parses one repository entry; errors name the ConfigMap, key and field. */
export function parseRepository(text: string, where: string): Omit<ArtifactRepository, 'source'> {
  const doc = readYamlDocument(text, where);
  const sections = 'a vendorAObject (or s3), vendorB (or azure), vendorCObject (or gcs) or plugin section';
  if (!isRecord(doc)) throw new RepositoryError(`${where}: must be a YAML object with ${sections}`);
  for (const k of Object.keys(doc)) {
    if (!REPOSITORY_FIELDS.has(k))
      throw new RepositoryError(
        `${where}: field "${k}" is not supported (plugflow stores artifacts in S3-compatible object stores, Azure-compatible blob stores, GCS and through artifact driver plugins: use vendorAObject/s3, vendorB/azure, vendorCObject/gcs or plugin)`,
      );
  }
  const store = doc.vendorAObject ?? doc.s3;
  const blob = doc.vendorB ?? doc.azure;
  const gcs = doc.vendorCObject ?? doc.gcs;
  if ([store, blob, gcs, doc.plugin].filter((x) => x !== undefined).length > 1)
    throw new RepositoryError(`${where}: names more than one store (vendorAObject/s3, vendorB/azure, vendorCObject/gcs, plugin); keep one`);
  const out: Omit<ArtifactRepository, 'source'> = isRecord(blob)
    ? { vendorB: parseBlobStore(blob, where) }
    : isRecord(gcs)
      ? { vendorCObject: parseGcs(gcs, where) }
      : doc.plugin !== undefined
        ? { plugin: parsePlugin(doc.plugin, where) }
        : { vendorAObject: parseObjectStore(store, where) };
  if (doc.archiveLogs !== undefined) {
    if (typeof doc.archiveLogs !== 'boolean') throw new RepositoryError(`${where}: archiveLogs must be true or false`);
    out.archiveLogs = doc.archiveLogs;
  }
  return out;
}

function parseObjectStore(store: unknown, where: string): ObjectStoreRepository {
  if (!isRecord(store)) throw new RepositoryError(`${where}: needs a vendorAObject (or s3) or vendorB (or azure) section`);
  for (const k of Object.keys(store)) {
    if (!STORE_FIELDS.has(k)) throw new RepositoryError(`${where}: vendorAObject.${k} is not supported`);
  }
  if (typeof store.bucket !== 'string' || store.bucket === '') throw new RepositoryError(`${where}: vendorAObject.bucket is required`);
  if (typeof store.endpoint !== 'string' || store.endpoint === '')
    throw new RepositoryError(`${where}: vendorAObject.endpoint is required (host:port of the object store)`);
  checkSecretRef(store.accessKeySecret, `${where}: vendorAObject.accessKeySecret`);
  checkSecretRef(store.secretKeySecret, `${where}: vendorAObject.secretKeySecret`);
  return withKeyFormat(store, `${where}: vendorAObject`) as ObjectStoreRepository;
}

/** The section with its keyFormat checked; the peer's older `keyPrefix` (a fixed prefix) becomes one. */
function withKeyFormat(section: Record<string, unknown>, field: string): Record<string, unknown> & { keyFormat?: string } {
  const { keyPrefix, ...repo } = section;
  if (typeof keyPrefix === 'string' && repo.keyFormat === undefined) repo.keyFormat = `${keyPrefix}/${DEFAULT_KEY_FORMAT}`;
  if (repo.keyFormat !== undefined && typeof repo.keyFormat !== 'string') throw new RepositoryError(`${field}.keyFormat must be a string`);
  return repo as Record<string, unknown> & { keyFormat?: string };
}

function parsePlugin(plugin: unknown, where: string): PluginRepository {
  if (!isRecord(plugin)) throw new RepositoryError(`${where}: plugin must be {name, configuration, keyFormat}`);
  for (const k of Object.keys(plugin))
    if (!['name', 'configuration', 'keyFormat'].includes(k)) throw new RepositoryError(`${where}: plugin.${k} is not supported`);
  if (typeof plugin.name !== 'string' || plugin.name === '')
    throw new RepositoryError(`${where}: plugin.name is required (an artifact driver registered with the controller)`);
  if (plugin.configuration !== undefined && typeof plugin.configuration !== 'string')
    throw new RepositoryError(`${where}: plugin.configuration must be a string (passed to the driver as written)`);
  const repo = withKeyFormat(plugin, `${where}: plugin`);
  return {
    name: plugin.name,
    configuration: (plugin.configuration as string | undefined) ?? '',
    ...(repo.keyFormat ? { keyFormat: repo.keyFormat } : {}),
  };
}

function parseGcs(gcs: Record<string, unknown>, where: string): GcsRepository {
  for (const k of Object.keys(gcs)) if (!GCS_FIELDS.has(k)) throw new RepositoryError(`${where}: vendorCObject.${k} is not supported`);
  if (typeof gcs.bucket !== 'string' || gcs.bucket === '') throw new RepositoryError(`${where}: vendorCObject.bucket is required`);
  checkSecretRef(gcs.serviceAccountKeySecret, `${where}: vendorCObject.serviceAccountKeySecret`);
  return withKeyFormat(gcs, `${where}: vendorCObject`) as GcsRepository;
}

function parseBlobStore(blob: Record<string, unknown>, where: string): BlobStoreRepository {
  for (const k of Object.keys(blob)) {
    if (k === 'useSDKCreds') throw new RepositoryError(`${where}: vendorB.useSDKCreds is not supported (give accountKeySecret)`);
    if (!BLOB_FIELDS.has(k)) throw new RepositoryError(`${where}: vendorB.${k} is not supported`);
  }
  for (const f of ['endpoint', 'container'] as const)
    if (typeof blob[f] !== 'string' || blob[f] === '')
      throw new RepositoryError(`${where}: vendorB.${f} is required${f === 'endpoint' ? ' (the URL of the storage account)' : ''}`);
  checkSecretRef(blob.accountKeySecret, `${where}: vendorB.accountKeySecret`);
  if (blob.blobNameFormat !== undefined && typeof blob.blobNameFormat !== 'string')
    throw new RepositoryError(`${where}: vendorB.blobNameFormat must be a string`);
  return { ...(blob as BlobStoreRepository) };
}

/**
 * The repository of a ConfigMap: `key`, else the default annotation, else its only key.
 * `cm` undefined means the ConfigMap does not exist.
 */
export function repositoryFrom(cm: RepositoryConfigMap, key: string | undefined): ArtifactRepository {
  const ns = cm.metadata?.namespace ?? '';
  const name = cm.metadata?.name ?? REPOSITORIES_CONFIGMAP;
  const keys = Object.keys(cm.data ?? {});
  const chosen = key ?? cm.metadata?.annotations?.[ANNOTATION_DEFAULT_REPOSITORY] ?? (keys.length === 1 ? keys[0] : undefined);
  if (chosen === undefined) {
    throw new RepositoryError(
      `ConfigMap ${ns}/${name} holds ${keys.length} repositories and names no default: annotate it with ` +
        `${ANNOTATION_DEFAULT_REPOSITORY}=<key> or set spec.artifactRepositoryRef.key`,
    );
  }
  const text = Object.hasOwn(cm.data ?? {}, chosen) ? cm.data![chosen] : undefined;
  if (text === undefined) throw new RepositoryError(`ConfigMap ${ns}/${name} has no key "${chosen}"`);
  return { ...parseRepository(text, `ConfigMap ${ns}/${name} key "${chosen}"`), source: `${ns}/${name}#${chosen}` };
}

function checkSecretRef(v: unknown, field: string): void {
  if (v === undefined) return;
  if (!isRecord(v) || typeof v.name !== 'string' || typeof v.key !== 'string' || !v.name || !v.key)
    throw new RepositoryError(`${field} must be {name, key} of a Secret`);
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
