/**
 * The artifact plan of one step pod: what each of its three plugflow programs does with artifacts.
 * Pure; the pod builder writes it into the pod as environment variables:
 *
 *   init  (PLUGFLOW_INPUT_ARTIFACTS)  fetch each input into VAR_DIR/inputs/<name>, unpacked; the
 *                                     main container mounts that at the input's `path` (subPath)
 *   main  (PLUGFLOW_ARTIFACTS)        the emissary packs each output's `path` into
 *                                     VAR_DIR/artifacts/<name> (tar+gzip, or the file as-is)
 *   wait  (PLUGFLOW_OUTPUT_ARTIFACTS) upload each packed output to its planned location
 *
 * Credentials are never values here: each Secret reference becomes an environment variable of
 * the init or wait container only (`valueFrom.secretKeyRef`), and the plans name the variable.
 * The main container sees no credential. The wait plan also holds the artifact record the node's
 * outputs will show (with its Secret references, never their values); the pod observer reads it
 * back from the pod spec, so the recorded location is exactly where the pod uploaded.
 */
import type { Artifact, SecretKeySelector, Template, VendorAObjectArtifact, VendorBArtifact, VendorCObjectArtifact } from '../api/index.js';
import { renderTemplate } from '../expr/index.js';
import { DEFAULT_KEY_FORMAT, namespacedKeyFormat, type ArtifactRepository } from './repository.js';
import type { GitSource } from './git.js';
import { MAIN_LOGS_ARTIFACT } from '../engine/artifacts.js';

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

export interface HttpSource {
  url: string;
  headers?: Array<{ name: string; value: string }>;
  usernameEnv?: string;
  passwordEnv?: string;
}

export type InputSource = { store: StoredLocation } | { http: HttpSource } | { raw: string } | { git: GitSource };

export interface InputArtifactPlan {
  name: string;
  path: string;
  mode?: number;
  recurseMode?: boolean;
  /** A path inside a fetched archive: only that part is placed at `path`. */
  subPath?: string;
  /** zip: unzip it; none: place it as fetched; unset: unpack a gzipped tar, place anything else. */
  archive?: 'zip' | 'none';
  source: InputSource;
}

/** What the emissary packs (no location, no credentials: it runs in the user's container). */
export interface PackPlan {
  name: string;
  path: string;
  archive: 'tar' | 'none';
  compressionLevel?: number;
}

export interface OutputArtifactPlan {
  name: string;
  optional?: boolean;
  store: StoredLocation;
  /** The record the node's outputs will hold once uploaded. */
  record: Artifact;
}

export interface ArtifactPlan {
  /** archiveLogs: the emissary writes the main container's stdout and stderr here (packed as main-logs). */
  logFile?: string;
  inputs: InputArtifactPlan[];
  packs: PackPlan[];
  outputs: OutputArtifactPlan[];
  /** Environment variables of the init/wait containers: name → Secret reference. */
  secrets: Array<{ env: string; ref: { name: string; key: string } }>;
  /** A data template's `source.artifactPaths`: the store and key prefix whose objects are listed. */
  listing?: StoredLocation;
}

/** What the main container of a data template's pod does (src/pod-side/data.ts). */
export interface DataPlan {
  listing: StoredLocation;
  transformation: Array<{ expression: string }>;
}

export class ArtifactPlanError extends Error {}

/** Values for the key format: `workflow.name`, `pod.name`, … (see keyVariables). */
export type KeyVariables = Record<string, string>;

/** `workflow.*` and `pod.name` as key formats use them, plus the creation time's parts. */
export function keyVariables(
  workflow: { name: string; namespace: string; uid: string; creationTimestamp?: string },
  podName: string,
): KeyVariables {
  const vars: KeyVariables = {
    'workflow.name': workflow.name,
    'workflow.namespace': workflow.namespace,
    'workflow.uid': workflow.uid,
    'pod.name': podName,
  };
  const t = workflow.creationTimestamp ? new Date(workflow.creationTimestamp) : undefined;
  if (t && !Number.isNaN(t.getTime())) {
    const two = (n: number) => String(n).padStart(2, '0');
    vars['workflow.creationTimestamp'] = t.toISOString();
    vars['workflow.creationTimestamp.Y'] = String(t.getUTCFullYear());
    vars['workflow.creationTimestamp.m'] = two(t.getUTCMonth() + 1);
    vars['workflow.creationTimestamp.d'] = two(t.getUTCDate());
    vars['workflow.creationTimestamp.H'] = two(t.getUTCHours());
    vars['workflow.creationTimestamp.M'] = two(t.getUTCMinutes());
    vars['workflow.creationTimestamp.S'] = two(t.getUTCSeconds());
  }
  return vars;
}

/**
 * The plan of a rendered leaf template (inputs already bound by the engine). `repository` is the
 * workflow's artifact repository, needed only for outputs that do not name a full location.
 */
export function planArtifacts(
  template: Template,
  repository: ArtifactRepository | undefined,
  keyVars: KeyVariables,
  options: { archiveLogs?: boolean; logFile?: string; gcsEndpoint?: string; gitKnownHosts?: string } = {},
): ArtifactPlan {
  const where = `template "${template.name}"`;
  const secrets = new SecretEnvs();
  const inputs: InputArtifactPlan[] = [];
  for (const a of template.inputs?.artifacts ?? []) {
    const field = `${where}: inputs.artifacts[${a.name}]`;
    if (!a.path) throw new ArtifactPlanError(`${field}.path is required: it is where the file or directory is placed`);
    const plan: InputArtifactPlan = {
      name: a.name,
      path: a.path,
      source: inputSource(withRepository(a, repository), secrets, field, options),
    };
    if (a.mode !== undefined) plan.mode = a.mode;
    if (a.recurseMode !== undefined) plan.recurseMode = a.recurseMode;
    if (a.subPath) plan.subPath = a.subPath;
    if (a.archive?.zip) plan.archive = 'zip';
    else if (a.archive?.none) plan.archive = 'none';
    inputs.push(plan);
  }
  const packs: PackPlan[] = [];
  const outputs: OutputArtifactPlan[] = [];
  for (const a of template.outputs?.artifacts ?? []) {
    if (a.from !== undefined || a.fromExpression !== undefined) continue; // a steps/DAG output, not a pod's
    const field = `${where}: outputs.artifacts[${a.name}]`;
    if (!a.path) throw new ArtifactPlanError(`${field}.path is required: it is the file or directory the step writes`);
    const archive = a.archive?.none ? 'none' : 'tar';
    const pack: PackPlan = { name: a.name, path: a.path, archive };
    if (a.archive?.tar?.compressionLevel !== undefined) pack.compressionLevel = a.archive.tar.compressionLevel;
    packs.push(pack);
    const location = outputLocation(a, template, repository, keyVars, archive, field);
    const store = storedLocation(location, secrets, field, options.gcsEndpoint);
    const record: Artifact = { name: a.name, path: a.path, ...location };
    if (archive === 'none') record.archive = { none: {} };
    const out: OutputArtifactPlan = { name: a.name, store, record };
    if (a.optional) out.optional = true;
    outputs.push(out);
  }
  let logFile: string | undefined;
  if (options.archiveLogs && options.logFile) {
    // The log is saved like an optional output artifact: a step never fails for its log's sake.
    logFile = options.logFile;
    const archive = 'tar';
    packs.push({ name: MAIN_LOGS_ARTIFACT, path: logFile, archive });
    const field = `${where}: archiveLogs`;
    const location = outputLocation({ name: MAIN_LOGS_ARTIFACT }, template, repository, keyVars, archive, field);
    outputs.push({
      name: MAIN_LOGS_ARTIFACT,
      optional: true,
      store: storedLocation(location, secrets, field, options.gcsEndpoint),
      record: { name: MAIN_LOGS_ARTIFACT, ...location },
    });
  }
  const paths = template.data?.source?.artifactPaths;
  const listing = paths
    ? listingLocation(paths, repository, secrets, `${where}: data.source.artifactPaths`, options.gcsEndpoint)
    : undefined;
  return { ...(logFile ? { logFile } : {}), ...(listing ? { listing } : {}), inputs, packs, outputs, secrets: secrets.list() };
}

/** What an artifact GC pod deletes: each artifact's location, credentials as variables. */
export function gcPlan(
  artifacts: readonly Artifact[],
  gcsEndpoint?: string,
): { stores: StoredLocation[]; secrets: ArtifactPlan['secrets'] } {
  const secrets = new SecretEnvs();
  const stores = artifacts.map((a) => storedLocation(a, secrets, `artifact "${a.name}"`, gcsEndpoint));
  return { stores, secrets: secrets.list() };
}

/**
 * Whether a step saves its main container's log (the peer's precedence): the template's
 * archiveLocation.archiveLogs, else the workflow's spec.archiveLogs, else the repository's.
 */
export function archivesLogs(
  template: Template,
  workflowArchiveLogs: boolean | undefined,
  repository: ArtifactRepository | undefined,
): boolean {
  return template.archiveLocation?.archiveLogs ?? workflowArchiveLogs ?? repository?.archiveLogs ?? false;
}

/** Where an output is stored: one of the record fields of a stored artifact. */
export type StoredRecord = Pick<Artifact, 'vendorAObject'> | Pick<Artifact, 'vendorB'> | Pick<Artifact, 'vendorCObject'>;

/** The record fields of the stores plugflow writes to. */
const STORES = ['vendorAObject', 'vendorB', 'vendorCObject'] as const;
type StoreField = (typeof STORES)[number];

/**
 * The output's location: its own record over the template's archiveLocation over the repository.
 * Which store it is in follows the first of them that names one (vendorAObject or vendorB); the
 * others' fields of the same store fill in what it leaves out.
 */
function outputLocation(
  a: Artifact,
  template: Template,
  repository: ArtifactRepository | undefined,
  keyVars: KeyVariables,
  archive: 'tar' | 'none',
  field: string,
): StoredRecord {
  const where = template.archiveLocation;
  const names = (x: object | undefined) => STORES.find((f) => (x as Record<string, unknown> | undefined)?.[f] !== undefined);
  const kind: StoreField = names(a) ?? names(where) ?? names(repository) ?? 'vendorAObject';
  const name = (given: string) => {
    const format = namespacedKeyFormat(given, repository, keyVars['workflow.namespace'] ?? '');
    let prefix: string;
    try {
      prefix = renderTemplate(format, keyVars, {}, `${field} key format`);
    } catch (err) {
      throw new ArtifactPlanError(`${field}: the key format ${JSON.stringify(format)} cannot be rendered: ${(err as Error).message}`);
    }
    return `${prefix.replace(/^\/+|\/+$/g, '')}/${a.name}${archive === 'tar' ? '.tgz' : ''}`;
  };
  const noRepository = () =>
    new ArtifactPlanError(
      `${field}: no artifact repository to store it in: create the ConfigMap artifact-repositories in the workflow's namespace ` +
        '(see the README, "Artifacts"), set spec.artifactRepositoryRef, or give the artifact a vendorAObject with bucket and endpoint',
    );
  if (kind === 'vendorCObject') {
    const { keyFormat, ...location }: VendorCObjectArtifact & { keyFormat?: string } = {
      ...(repository?.vendorCObject ?? {}),
      ...(where?.vendorCObject ?? {}),
      ...(a.vendorCObject ?? {}),
    };
    if (!location.bucket) throw noRepository();
    if (a.vendorCObject?.key) return { vendorCObject: location };
    return { vendorCObject: { ...location, key: name(where?.vendorCObject?.key ?? keyFormat ?? DEFAULT_KEY_FORMAT) } };
  }
  if (kind === 'vendorB') {
    const { blobNameFormat, ...location }: VendorBArtifact & { blobNameFormat?: string } = {
      ...(repository?.vendorB ?? {}),
      ...(where?.vendorB ?? {}),
      ...(a.vendorB ?? {}),
    };
    if (!location.endpoint || !location.container) throw noRepository();
    if (a.vendorB?.blob) return { vendorB: location };
    return { vendorB: { ...location, blob: name(where?.vendorB?.blob ?? blobNameFormat ?? DEFAULT_KEY_FORMAT) } };
  }
  const { keyFormat, ...location }: VendorAObjectArtifact & { keyFormat?: string } = {
    ...(repository?.vendorAObject ?? {}),
    ...(where?.vendorAObject ?? {}),
    ...(a.vendorAObject ?? {}),
  };
  if (!location.bucket || !location.endpoint) throw noRepository();
  if (a.vendorAObject?.key) return { vendorAObject: location }; // the artifact names its own key
  // A template's archiveLocation key is a format like the repository's.
  return { vendorAObject: { ...location, key: name(where?.vendorAObject?.key ?? keyFormat ?? DEFAULT_KEY_FORMAT) } };
}

/**
 * A "key-only" object-store artifact (`vendorAObject: {key: …}`, as the peer allows) takes the
 * bucket, endpoint and credentials of the workflow's repository; its own fields win.
 */
/**
 * Where a data template lists: its own location over the repository's (no location at all: the
 * repository's store), with its key (or blob name) as the prefix — empty lists everything.
 */
function listingLocation(
  paths: Artifact,
  repository: ArtifactRepository | undefined,
  secrets: SecretEnvs,
  field: string,
  gcsEndpoint: string | undefined,
): StoredLocation {
  const located = paths.vendorAObject || paths.vendorB || paths.vendorCObject;
  const base: Artifact = located
    ? paths
    : repository?.vendorB
      ? { ...paths, vendorB: {} }
      : repository?.vendorCObject
        ? { ...paths, vendorCObject: {} }
        : { ...paths, vendorAObject: {} };
  const a = withRepository(base, repository);
  const prefix = a.vendorCObject?.key ?? a.vendorB?.blob ?? a.vendorAObject?.key ?? '';
  // The store checks want a key; the listing's prefix may be empty, so it is put back after.
  const keyed: Artifact = a.vendorCObject
    ? { ...a, vendorCObject: { ...a.vendorCObject, key: 'x' } }
    : a.vendorB
      ? { ...a, vendorB: { ...a.vendorB, blob: 'x' } }
      : { ...a, vendorAObject: { ...a.vendorAObject, key: 'x' } };
  const loc = storedLocation(keyed, secrets, field, gcsEndpoint);
  return isBlob(loc) ? { ...loc, blob: prefix } : { ...loc, key: prefix };
}

function withRepository(a: Artifact, repository: ArtifactRepository | undefined): Artifact {
  if (!isKeyOnly(a) || !repository) return a;
  if (a.vendorCObject) {
    const { keyFormat: _format, ...repo } = repository.vendorCObject ?? {};
    return { ...a, vendorCObject: { ...repo, ...a.vendorCObject } };
  }
  if (a.vendorB) {
    const { blobNameFormat: _format, ...repo } = repository.vendorB ?? {};
    return { ...a, vendorB: { ...repo, ...a.vendorB } };
  }
  const { keyFormat: _format, ...repo } = repository.vendorAObject ?? {};
  return { ...a, vendorAObject: { ...repo, ...a.vendorAObject } };
}

/** Whether an artifact names an object key (or blob) but not where the store is (its repository says). */
export function isKeyOnly(a: Artifact): boolean {
  if (a.vendorCObject) return !a.vendorCObject.bucket;
  if (a.vendorB) return !(a.vendorB.endpoint && a.vendorB.container);
  return !!a.vendorAObject && !(a.vendorAObject.bucket && a.vendorAObject.endpoint);
}

function inputSource(
  a: Artifact,
  secrets: SecretEnvs,
  field: string,
  settings: { gcsEndpoint?: string; gitKnownHosts?: string },
): InputSource {
  if (a.raw) return { raw: a.raw.data ?? '' };
  if (a.vendorAObject || a.vendorB || a.vendorCObject) return { store: storedLocation(a, secrets, field, settings.gcsEndpoint) };
  if (a.http) {
    if (!a.http.url) throw new ArtifactPlanError(`${field}.http.url is required`);
    const http: HttpSource = { url: a.http.url };
    if (a.http.headers?.length) http.headers = a.http.headers.map((h) => ({ name: h.name, value: h.value }));
    const basic = a.http.auth?.basicAuth;
    if (basic?.usernameSecret) http.usernameEnv = secrets.env(basic.usernameSecret, `${field}.http.auth.basicAuth.usernameSecret`);
    if (basic?.passwordSecret) http.passwordEnv = secrets.env(basic.passwordSecret, `${field}.http.auth.basicAuth.passwordSecret`);
    return { http };
  }
  if (a.git) {
    if (!a.git.repo) throw new ArtifactPlanError(`${field}.git.repo is required`);
    const g: GitSource = { repo: a.git.repo };
    for (const k of ['revision', 'branch', 'singleBranch', 'depth', 'disableSubmodules', 'fetch'] as const)
      if (a.git[k] !== undefined) (g as unknown as Record<string, unknown>)[k] = a.git[k];
    if (a.git.usernameSecret) g.usernameEnv = secrets.env(a.git.usernameSecret, `${field}.git.usernameSecret`);
    if (a.git.passwordSecret) g.passwordEnv = secrets.env(a.git.passwordSecret, `${field}.git.passwordSecret`);
    if (a.git.sshPrivateKeySecret) g.sshPrivateKeyEnv = secrets.env(a.git.sshPrivateKeySecret, `${field}.git.sshPrivateKeySecret`);
    if (a.git.insecureIgnoreHostKey) g.insecureIgnoreHostKey = true;
    else if (settings.gitKnownHosts && !/^https?:\/\//.test(a.git.repo)) g.knownHosts = settings.gitKnownHosts;
    return { git: g };
  }
  throw new ArtifactPlanError(`${field}: has no location plugflow can fetch (vendorAObject, vendorB, vendorCObject, http, git or raw)`);
}

/** The stored location of a record (vendorB or vendorAObject), credentials as variables. */
function storedLocation(
  a: Pick<Artifact, StoreField>,
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

/** One environment variable per distinct Secret key. */
class SecretEnvs {
  private readonly byRef = new Map<string, string>();
  private readonly refs: ArtifactPlan['secrets'] = [];

  env(ref: SecretKeySelector, field: string): string {
    if (!ref.name || !ref.key) throw new ArtifactPlanError(`${field} needs the name and key of a Secret`);
    const id = `${ref.name}\u0000${ref.key}`;
    let env = this.byRef.get(id);
    if (!env) {
      env = `PLUGFLOW_SECRET_${this.refs.length}`;
      this.byRef.set(id, env);
      this.refs.push({ env, ref: { name: ref.name, key: ref.key } });
    }
    return env;
  }

  list(): ArtifactPlan['secrets'] {
    return this.refs;
  }
}
