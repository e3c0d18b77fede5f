/**
 * Artifact records (spec document 001, "Artifacts"): inputs, outputs and arguments, archives,
 * artifact GC and repositories; the stores they are fetched from and kept in are declared in
 * artifact-locations.ts. Each record is declared once (record-declaration.ts): its type, schema
 * and catalogue rules derive from the declaration below. One artifact type serves every context
 * (input, output, argument, a data template's source); each context is a variant with its own
 * rules.
 *
 * The CRD keeps artifacts open (only `name` is typed there): the engine moves artifacts around
 * without interpreting their locations, and the validator words their problems better.
 */
import {
  BLOB_STORE_ARTIFACT_RECORD,
  GCS_ARTIFACT_RECORD,
  GIT_ARTIFACT_RECORD,
  HTTP_ARTIFACT_RECORD,
  OBJECT_STORE_ARTIFACT_RECORD,
  PLUGIN_ARTIFACT_RECORD,
  RAW_ARTIFACT_RECORD,
  type GitArtifact,
  type HDFSArtifact,
  type HTTPArtifact,
  type PluginArtifact,
  type RawArtifact,
  type VendorAObjectArtifact,
  type VendorBArtifact,
  type VendorCObjectArtifact,
  type VendorDObjectArtifact,
  type VendorOArtifact,
} from './artifact-locations.js';
import { METADATA_RECORD, type Metadata } from './common-records.js';
import { bool, emptyObject, int32, obj, openObject, str } from './crd/schema-builders.js';
import { no, ok, rec, type FieldRule } from './field-rules.js';
import { field, record, ref, variant, type RecordOf } from './record-declaration.js';

export * from './artifact-locations.js';

/*
 * The three locations the spec lists and plugflow keeps refusing, each for want of a server to
 * build it against here, with what does the same job.
 */
const HDFS =
  "hdfs talks HDFS's own RPC protocol to a name node, and no HDFS server builds or installs here to test it against; reach HDFS through WebHDFS with an http artifact (GET in, PUT out) or through an artifact driver plugin";
const OSS =
  "oss / vendorDObject signs its requests in Alibaba Cloud OSS's own scheme, and no OSS server builds or installs here to test it against; use the bucket's S3-compatible endpoint with s3 / vendorAObject, or an artifact driver plugin";
const ARTIFACTORY =
  'artifactory / vendorO: no Artifactory server builds or installs here to test it against; its protocol is a GET and a PUT of the full URL with basic auth, which an http artifact with auth.basicAuth does';
const INPUT_ONLY = 'applies when an input artifact is placed; an output artifact is read from its path as it is';
const STORED_IN_STORE = "an output artifact is stored in the workflow's artifact repository or its own vendorAObject";
const LISTED_IN_STORE = 'a data template lists the objects of an object store (vendorAObject, vendorB, vendorCObject)';
/** Empty-object shape. */
export type EmptyObject = Record<string, never>;

/* ---- Where an artifact lives: one set of location fields, with the rules of each context. ---- */

type LocationKey =
  'vendorAObject' | 'vendorB' | 'vendorCObject' | 'http' | 'raw' | 'git' | 'hdfs' | 'vendorDObject' | 'vendorO' | 'plugin' | 'archiveLogs';

/** The location fields, their rules given by the context (archive location, output, input...). */
function locationFields(rules: Record<LocationKey, FieldRule>) {
  return {
    vendorAObject: field<VendorAObjectArtifact>(OBJECT_STORE_ARTIFACT_RECORD.schema, rules.vendorAObject),
    vendorB: field<VendorBArtifact>(BLOB_STORE_ARTIFACT_RECORD.schema, rules.vendorB),
    vendorCObject: field<VendorCObjectArtifact>(GCS_ARTIFACT_RECORD.schema, rules.vendorCObject),
    http: field<HTTPArtifact>(HTTP_ARTIFACT_RECORD.schema, rules.http),
    raw: field<RawArtifact>(RAW_ARTIFACT_RECORD.schema, rules.raw),
    git: field<GitArtifact>(GIT_ARTIFACT_RECORD.schema, rules.git),
    hdfs: field<HDFSArtifact>(openObject(), rules.hdfs),
    vendorDObject: field<VendorDObjectArtifact>(openObject(), rules.vendorDObject),
    vendorO: field<VendorOArtifact>(openObject(), rules.vendorO),
    plugin: field<PluginArtifact>(PLUGIN_ARTIFACT_RECORD.schema, rules.plugin),
    archiveLogs: field<boolean>(bool(), rules.archiveLogs),
  };
}

/** Locations an output cannot be stored in (fetch-only ones, and stores not implemented). */
const NOT_STORED_THERE = {
  http: no("a template's archive location is a store; give http on each output artifact instead"),
  raw: no(STORED_IN_STORE),
  git: no(STORED_IN_STORE),
  hdfs: no(STORED_IN_STORE),
  vendorDObject: no(OSS),
  vendorO: no(ARTIFACTORY),
};

/** The locations an input or argument artifact can be fetched from. */
const FETCHED_FROM = {
  vendorAObject: rec('ObjectStoreArtifact'),
  http: rec('HTTPArtifact'),
  raw: rec('RawArtifact'),
  git: rec('GitArtifact', 'one', 'cloned over http(s) before the main container starts'),
  vendorB: rec('BlobStoreArtifact'),
  vendorCObject: rec('GcsArtifact'),
  plugin: rec('PluginArtifact', 'one', 'loaded by the artifact driver the controller runs beside the step'),
  hdfs: no(HDFS),
  vendorDObject: no(OSS),
  vendorO: no(ARTIFACTORY),
};

/** Where an artifact lives (or the default archive location of a step). */
export const ARCHIVE_LOCATION_RECORD = record(
  'ArchiveLocation',
  locationFields({
    vendorAObject: rec('ObjectStoreArtifact', 'one', 'its key is a key format like the repository one'),
    vendorB: rec('BlobStoreArtifact', 'one', 'its blob is a name format like the repository one'),
    vendorCObject: rec('GcsArtifact', 'one', 'its key is a key format like the repository one'),
    archiveLogs: ok("this template's main container log saved as the artifact main-logs"),
    ...NOT_STORED_THERE,
    plugin: rec('PluginArtifact', 'one', 'its key is a key format like the repository one'),
  }),
);
export interface ArtifactLocation extends RecordOf<typeof ARCHIVE_LOCATION_RECORD.fields> {}

/* ---- Archives and GC. ---- */

export const TAR_STRATEGY_RECORD = record('TarStrategy', {
  compressionLevel: field<number>(int32(), ok('gzip level 0-9')),
});
export interface TarStrategy extends RecordOf<typeof TAR_STRATEGY_RECORD.fields> {}
export const INPUT_TAR_STRATEGY = variant(TAR_STRATEGY_RECORD, 'InputTarStrategy', {
  compressionLevel: no('applies when an output is packed; an input is unpacked whatever its level'),
});

export const ARCHIVE_STRATEGY_RECORD = record('ArchiveStrategy', {
  tar: ref<TarStrategy>(TAR_STRATEGY_RECORD, 'one', 'the default: tar + gzip'),
  none: field<EmptyObject>(emptyObject(), ok('the file stored as it is (a directory needs tar)')),
  zip: field<EmptyObject>(
    emptyObject(),
    no('zip unzips input artifacts (set it on the input); outputs are stored as tar (the default) or none'),
  ),
});
export interface ArchiveStrategy extends RecordOf<typeof ARCHIVE_STRATEGY_RECORD.fields> {}
export const INPUT_ARCHIVE_STRATEGY = variant(ARCHIVE_STRATEGY_RECORD, 'InputArchiveStrategy', {
  tar: rec(INPUT_TAR_STRATEGY.name, 'one', 'a gzipped tar is unpacked (the default)'),
  none: ok('placed as fetched, even when it is a tarball'),
  zip: ok("unzipped: the archive's entries become the directory at path (links and names leaving it are refused)"),
});

export const ARTIFACT_GC_RECORD = record('ArtifactGC', {
  strategy: field<string>(str(), ok('OnWorkflowCompletion, OnWorkflowDeletion or Never (the default)')),
  serviceAccountName: field<string>(str(), ok('the service account of the GC pod')),
  podMetadata: ref<Metadata>(METADATA_RECORD, 'one', 'labels and annotations of the GC pod'),
});
export interface ArtifactGC extends RecordOf<typeof ARTIFACT_GC_RECORD.fields> {}
const ONE_GC_POD = no("set it on spec.artifactGC: one GC pod deletes all of a strategy's artifacts");
export const ARTIFACT_GC_OF_ARTIFACT = variant(ARTIFACT_GC_RECORD, 'ArtifactGCOfArtifact', {
  strategy: ok('OnWorkflowCompletion, OnWorkflowDeletion or Never'),
  serviceAccountName: ONE_GC_POD,
  podMetadata: ONE_GC_POD,
});

/** Which artifact repository (a ConfigMap key) output artifacts go to; see src/artifacts/repository.ts. */
export const ARTIFACT_REPOSITORY_REF_RECORD = record('ArtifactRepositoryRef', {
  configMap: field<string>(str(), ok('default artifact-repositories')),
  key: field<string>(str(), ok("default: the ConfigMap's default key")),
});
export interface ArtifactRepositoryRef extends RecordOf<typeof ARTIFACT_REPOSITORY_REF_RECORD.fields> {}

/* ---- The artifact: an output's rules here; inputs, arguments and a data source are variants. ---- */

export const OUTPUT_ARTIFACT_RECORD = record('OutputArtifact', {
  artifactGC: ref<ArtifactGC>(ARTIFACT_GC_OF_ARTIFACT, 'one', "this artifact's own strategy"),
  /** Unique within a template's inputs/outputs. */
  name: field<string>(str()).required(),
  /** Container path. */
  path: field<string>(str(), ok('the file or directory the step writes')),
  optional: field<boolean>(bool(), ok('a missing path is skipped instead of failing the step')),
  globalName: field<string>(str(), ok('exported as a workflow output artifact')),
  archive: ref<ArchiveStrategy>(ARCHIVE_STRATEGY_RECORD),
  /** Refers to an artifact of a previous step. */
  from: field<string>(str(), ok('steps and DAG templates: an artifact of one of their steps or tasks')),
  fromExpression: field<string>(str(), ok('steps and DAG templates')),
  /** 0 to 0777, applied when loading input artifacts. */
  mode: field<number>(int32(), no(INPUT_ONLY)),
  recurseMode: field<boolean>(bool(), no(INPUT_ONLY)),
  subPath: field<string>(str(), no(INPUT_ONLY)),
  ...locationFields({
    vendorAObject: rec('ObjectStoreArtifact', 'one', 'its own location over the repository'),
    vendorB: rec('BlobStoreArtifact', 'one', 'its own location over the repository'),
    vendorCObject: rec('GcsArtifact', 'one', 'its own location over the repository'),
    ...NOT_STORED_THERE,
    http: rec(
      'HTTPArtifact',
      'one',
      'uploaded with PUT to url (tar+gzip unless archive none), 307/308 redirects followed; the server does not download it (not an artifact repository)',
    ),
    plugin: rec(
      'PluginArtifact',
      'one',
      'saved by the artifact driver the controller runs beside the step (its own location over the repository)',
    ),
    archiveLogs: no('set archiveLogs on the workflow, the template (archiveLocation.archiveLogs) or the repository'),
  }),
  deleted: field<boolean>(bool(), no('plugflow does not mark collected artifacts; status.artifactGCStatus says what was collected')),
});
export interface Artifact extends RecordOf<typeof OUTPUT_ARTIFACT_RECORD.fields> {}

/** Fields of input and argument artifacts that only outputs (or the workflow) may set. */
const ONLY_OUTPUTS = {
  artifactGC: no('only output artifacts (and spec.artifactGC) say when stored artifacts are deleted'),
  archiveLogs: no('set archiveLogs on the workflow, the template (archiveLocation.archiveLogs) or the repository'),
  deleted: no('plugflow does not mark collected artifacts; status.artifactGCStatus says what was collected'),
  globalName: no('only output artifacts are exported with globalName'),
};

export const INPUT_ARTIFACT = variant(OUTPUT_ARTIFACT_RECORD, 'InputArtifact', {
  path: ok('where the file or directory is placed (required for pods)'),
  mode: ok(),
  recurseMode: ok(),
  optional: ok('nothing is placed when no artifact is supplied'),
  subPath: ok('only this path inside the fetched artifact is placed'),
  ...FETCHED_FROM,
  from: no("an input takes the call's argument artifact; put from on the argument"),
  fromExpression: no("an input takes the call's argument artifact; put fromExpression on the argument"),
  archive: rec(INPUT_ARCHIVE_STRATEGY.name, 'one', 'how the fetched artifact is placed'),
  ...ONLY_OUTPUTS,
});

export const ARGUMENT_ARTIFACT = variant(OUTPUT_ARTIFACT_RECORD, 'ArgumentArtifact', {
  from: ok('an artifact of a previous step, task, input or workflow output'),
  fromExpression: ok('an expression whose value is such an artifact'),
  subPath: ok(),
  optional: ok(),
  ...FETCHED_FROM,
  path: no("the template's input artifact declares the path"),
  mode: no("the template's input artifact declares the mode"),
  recurseMode: no("the template's input artifact declares recurseMode"),
  archive: no('archive says how an output is packed; arguments are unpacked by what they hold'),
  ...ONLY_OUTPUTS,
});

/** Same fields as Artifact (the source of a data template): only a store's location is read. */
export type ArtifactPaths = Artifact;
export const ARTIFACT_PATHS = variant(
  OUTPUT_ARTIFACT_RECORD,
  'ArtifactPaths',
  {
    vendorAObject: rec('ObjectStoreArtifact', 'one', 'the objects whose keys start with key are listed (no key: the whole bucket)'),
    vendorB: rec('BlobStoreArtifact', 'one', 'the blobs whose names start with blob are listed'),
    vendorCObject: rec('GcsArtifact', 'one', 'the objects whose keys start with key are listed'),
    http: no(LISTED_IN_STORE),
    raw: no(LISTED_IN_STORE),
    git: no(LISTED_IN_STORE),
    hdfs: no(HDFS),
    vendorDObject: no(OSS),
    vendorO: no(ARTIFACTORY),
    plugin: no(LISTED_IN_STORE),
    path: no('a data template lists keys; it places no file'),
  },
  ['name', 'vendorAObject', 'vendorB', 'vendorCObject', 'http', 'raw', 'git', 'hdfs', 'vendorDObject', 'vendorO', 'plugin', 'path'],
);

/** `manifestFrom.artifact` of a resource template only names an input artifact. */
export const MANIFEST_ARTIFACT = variant(OUTPUT_ARTIFACT_RECORD, 'ManifestArtifact', {
  ...(Object.fromEntries(
    Object.keys(INPUT_ARTIFACT.rules).map((k) => [
      k,
      no(
        'manifestFrom.artifact only names an input artifact; give its source on inputs.artifacts (as the peer, which reads only the name)',
      ),
    ]),
  ) as Record<string, FieldRule>),
  name: ok('an input artifact of the template (inputs.artifacts, with a path): its file is the manifest'),
});

/**
 * An artifact in the CRD: open (the validator checks its fields along the catalogue), with its
 * name typed and required.
 */
export const ARTIFACT_CRD_SCHEMA = obj({ name: str() }, { required: ['name'], open: true });
