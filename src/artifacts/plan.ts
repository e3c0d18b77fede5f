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
import type { Artifact, PluginArtifact, Template, VendorAObjectArtifact, VendorBArtifact, VendorCObjectArtifact } from '../api/index.js';
import { renderTemplate } from '../expr/index.js';
import { DEFAULT_KEY_FORMAT, namespacedKeyFormat, type ArtifactRepository } from './repository.js';
import type { GitSource } from './git.js';
import { httpSource, type HttpSource } from './plan-http.js';
import { SecretEnvs, type SecretEnvList } from './secret-envs.js';
import { ArtifactPlanError } from './plan-error.js';
import { isBlob, storedLocation, type StoredLocation } from './plan-stores.js';
import { pluginLocation, type PluginLocation } from './plan-plugin.js';
import type { ArtifactDriver } from './drivers.js';
import { MAIN_LOGS_ARTIFACT } from '../api/index.js';
import type { KeyVariables } from './key-variables.js';

export {
  describeStored,
  isBlob,
  isGcs,
  type BlobLocation,
  type GcsLocation,
  type StoreLocation,
  type StoredLocation,
} from './plan-stores.js';

export type { HttpSource, OAuth2Source } from './plan-http.js';

export type InputSource =
  { store: StoredLocation } | { http: HttpSource } | { raw: string } | { git: GitSource } | { plugin: PluginLocation };

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
  /** Where it is uploaded: a store (the repository's or its own), or with PUT to an http URL. */
  store?: StoredLocation;
  http?: HttpSource;
  plugin?: PluginLocation;
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
  secrets: SecretEnvList;
  /** A data template's `source.artifactPaths`: the store and key prefix whose objects are listed. */
  listing?: StoredLocation;
  /** The artifact drivers the pod talks to (their containers are added to it), in order of first use. */
  drivers?: string[];
}

/** What the main container of a data template's pod does (src/pod-side/data.ts). */
export interface DataPlan {
  listing: StoredLocation;
  transformation: Array<{ expression: string }>;
}

export { ArtifactPlanError } from './plan-error.js';

export interface PlanOptions {
  archiveLogs?: boolean;
  logFile?: string;
  gcsEndpoint?: string;
  gitKnownHosts?: string;
  /** The artifact drivers the controller runs (drivers.ts); a plugin artifact naming another is refused. */
  artifactDrivers?: readonly ArtifactDriver[];
}

export { keyVariables, type KeyVariables } from './key-variables.js';

/**
 * The plan of a rendered leaf template (inputs already bound by the engine). `repository` is the
 * workflow's artifact repository, needed only for outputs that do not name a full location.
 */
export function planArtifacts(
  template: Template,
  repository: ArtifactRepository | undefined,
  keyVars: KeyVariables,
  options: PlanOptions = {},
): ArtifactPlan {
  const where = `template "${template.name}"`;
  const secrets = new SecretEnvs((m) => new ArtifactPlanError(m));
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
    let out: OutputArtifactPlan;
    if (a.http) {
      // Uploaded with PUT to its own URL (the peer's http output); the record keeps the location
      // as written (Secret references, never values), so a later step can GET it back.
      out = {
        name: a.name,
        http: httpSource(a.http, secrets, field),
        record: { name: a.name, path: a.path, http: structuredClone(a.http) },
      };
    } else {
      const location = outputLocation(a, template, repository, keyVars, archive, field);
      out = { name: a.name, ...uploadTarget(location, secrets, field, options), record: { name: a.name, path: a.path, ...location } };
    }
    if (archive === 'none') out.record.archive = { none: {} };
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
      ...uploadTarget(location, secrets, field, options),
      record: { name: MAIN_LOGS_ARTIFACT, ...location },
    });
  }
  const paths = template.data?.source?.artifactPaths;
  const listing = paths
    ? listingLocation(paths, repository, secrets, `${where}: data.source.artifactPaths`, options.gcsEndpoint)
    : undefined;
  const drivers = [
    ...new Set([
      ...inputs.flatMap((i) => ('plugin' in i.source ? [i.source.plugin.name] : [])),
      ...outputs.flatMap((o) => (o.plugin ? [o.plugin.name] : [])),
    ]),
  ];
  return {
    ...(logFile ? { logFile } : {}),
    ...(listing ? { listing } : {}),
    ...(drivers.length ? { drivers } : {}),
    inputs,
    packs,
    outputs,
    secrets: secrets.list(),
  };
}

/** Where the wait container uploads an output's location: its store, or its artifact driver. */
function uploadTarget(
  location: StoredRecord,
  secrets: SecretEnvs,
  field: string,
  options: PlanOptions,
): Pick<OutputArtifactPlan, 'store' | 'plugin'> {
  if ('plugin' in location && location.plugin)
    return { plugin: pluginLocation(location.plugin, options.artifactDrivers ?? [], `${field}.plugin`) };
  return { store: storedLocation(location as Exclude<StoredRecord, Pick<Artifact, 'plugin'>>, secrets, field, options.gcsEndpoint) };
}

/** What an artifact GC pod deletes: each artifact's location (a store's, or a driver's), credentials as variables. */
export function gcPlan(
  artifacts: readonly Artifact[],
  gcsEndpoint?: string,
  drivers: readonly ArtifactDriver[] = [],
): { stores: Array<StoredLocation | PluginLocation>; secrets: ArtifactPlan['secrets'] } {
  const secrets = new SecretEnvs((m) => new ArtifactPlanError(m));
  const stores = artifacts.map((a) =>
    a.plugin
      ? pluginLocation(a.plugin, drivers, `artifact "${a.name}".plugin`)
      : storedLocation(a, secrets, `artifact "${a.name}"`, gcsEndpoint),
  );
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
export type StoredRecord =
  Pick<Artifact, 'vendorAObject'> | Pick<Artifact, 'vendorB'> | Pick<Artifact, 'vendorCObject'> | Pick<Artifact, 'plugin'>;

/** The record fields of the stores plugflow writes to (plugin: through an artifact driver). */
const STORES = ['vendorAObject', 'vendorB', 'vendorCObject', 'plugin'] as const;
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
  if (kind === 'plugin') {
    const { keyFormat, ...location }: PluginArtifact & { keyFormat?: string } = {
      ...(repository?.plugin ?? {}),
      ...(where?.plugin ?? {}),
      ...(a.plugin ?? {}),
    };
    if (!location.name) throw noRepository();
    if (a.plugin?.key) return { plugin: location };
    return { plugin: { ...location, key: name(where?.plugin?.key ?? keyFormat ?? DEFAULT_KEY_FORMAT) } };
  }
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

/** A key-only artifact (`vendorAObject: {key}`, `plugin: {key}`, …, as the peer allows) takes the rest from the repository. */
function withRepository(a: Artifact, repository: ArtifactRepository | undefined): Artifact {
  if (!isKeyOnly(a) || !repository) return a;
  if (a.plugin) {
    const { keyFormat: _format, ...repo } = repository.plugin ?? {};
    return { ...a, plugin: { ...repo, ...a.plugin } };
  }
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
  if (a.plugin) return !a.plugin.name;
  if (a.vendorCObject) return !a.vendorCObject.bucket;
  if (a.vendorB) return !(a.vendorB.endpoint && a.vendorB.container);
  return !!a.vendorAObject && !(a.vendorAObject.bucket && a.vendorAObject.endpoint);
}

function inputSource(a: Artifact, secrets: SecretEnvs, field: string, settings: PlanOptions): InputSource {
  if (a.raw) return { raw: a.raw.data ?? '' };
  if (a.plugin) return { plugin: pluginLocation(a.plugin, settings.artifactDrivers ?? [], `${field}.plugin`) };
  if (a.vendorAObject || a.vendorB || a.vendorCObject) return { store: storedLocation(a, secrets, field, settings.gcsEndpoint) };
  if (a.http) return { http: httpSource(a.http, secrets, field) };
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
  throw new ArtifactPlanError(
    `${field}: has no location plugflow can fetch (vendorAObject, vendorB, vendorCObject, http, git, raw or plugin)`,
  );
}
