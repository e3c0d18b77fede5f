/**
 * The artifact records of THE list of supported and refused fields (supported-fields.ts, which
 * spreads these into its records): inputs, outputs and arguments, the locations they are fetched
 * from and stored in, archives, artifact GC and repositories (issue 11).
 */
import { no, ok, rec, type FieldRule } from './field-rules.js';
import type { RecordName } from './supported-fields.js';

const OBJECT_STORE_ONLY =
  'plugflow stores and fetches artifacts in S3-compatible object stores (vendorAObject), Azure-compatible blob stores (vendorB) and GCS (vendorCObject), and fetches them over http, from git and raw; this location is not implemented yet';
const INPUT_ONLY = 'applies when an input artifact is placed; an output artifact is read from its path as it is';
const STORED_IN_STORE = "an output artifact is stored in the workflow's artifact repository or its own vendorAObject";

/** The artifact records, by the spec's names. */
const LISTED_IN_STORE = 'a data template lists the objects of an object store (vendorAObject, vendorB, vendorCObject)';

export const ARTIFACT_RECORDS = {
  ArtifactPaths: {
    name: ok(),
    vendorAObject: rec('ObjectStoreArtifact', 'one', 'the objects whose keys start with key are listed (no key: the whole bucket)'),
    vendorB: rec('BlobStoreArtifact', 'one', 'the blobs whose names start with blob are listed'),
    vendorCObject: rec('GcsArtifact', 'one', 'the objects whose keys start with key are listed'),
    http: no(LISTED_IN_STORE),
    raw: no(LISTED_IN_STORE),
    git: no(LISTED_IN_STORE),
    hdfs: no(OBJECT_STORE_ONLY),
    vendorDObject: no(OBJECT_STORE_ONLY),
    vendorO: no(OBJECT_STORE_ONLY),
    path: no('a data template lists keys; it places no file'),
  },
  InputArtifact: {
    name: ok(),
    path: ok('where the file or directory is placed (required for pods)'),
    mode: ok(),
    recurseMode: ok(),
    optional: ok('nothing is placed when no artifact is supplied'),
    subPath: ok('only this path inside the fetched artifact is placed'),
    ...artifactLocations(),
    from: no("an input takes the call's argument artifact; put from on the argument"),
    fromExpression: no("an input takes the call's argument artifact; put fromExpression on the argument"),
    archive: rec('InputArchiveStrategy', 'one', 'how the fetched artifact is placed'),
    globalName: no('only output artifacts are exported with globalName'),
    ...artifactRefusals(),
  },
  OutputArtifact: {
    artifactGC: rec('ArtifactGCOfArtifact', 'one', "this artifact's own strategy"),
    name: ok(),
    path: ok('the file or directory the step writes'),
    optional: ok('a missing path is skipped instead of failing the step'),
    globalName: ok('exported as a workflow output artifact'),
    archive: rec('ArchiveStrategy'),
    from: ok('steps and DAG templates: an artifact of one of their steps or tasks'),
    fromExpression: ok('steps and DAG templates'),
    vendorAObject: rec('ObjectStoreArtifact', 'one', 'its own location over the repository'),
    vendorB: rec('BlobStoreArtifact', 'one', 'its own location over the repository'),
    vendorCObject: rec('GcsArtifact', 'one', 'its own location over the repository'),
    mode: no(INPUT_ONLY),
    recurseMode: no(INPUT_ONLY),
    subPath: no(INPUT_ONLY),
    ...notStoredThere(),
    archiveLogs: no('set archiveLogs on the workflow, the template (archiveLocation.archiveLogs) or the repository'),
    deleted: no('plugflow does not mark collected artifacts; status.artifactGCStatus says what was collected'),
  },
  ArgumentArtifact: {
    name: ok(),
    from: ok('an artifact of a previous step, task, input or workflow output'),
    fromExpression: ok('an expression whose value is such an artifact'),
    subPath: ok(),
    optional: ok(),
    ...artifactLocations(),
    path: no("the template's input artifact declares the path"),
    mode: no("the template's input artifact declares the mode"),
    recurseMode: no("the template's input artifact declares recurseMode"),
    archive: no('archive says how an output is packed; arguments are unpacked by what they hold'),
    globalName: no('only output artifacts are exported with globalName'),
    ...artifactRefusals(),
  },
  ArchiveLocation: {
    vendorAObject: rec('ObjectStoreArtifact', 'one', 'its key is a key format like the repository one'),
    vendorB: rec('BlobStoreArtifact', 'one', 'its blob is a name format like the repository one'),
    vendorCObject: rec('GcsArtifact', 'one', 'its key is a key format like the repository one'),
    archiveLogs: ok("this template's main container log saved as the artifact main-logs"),
    ...notStoredThere(),
  },
  ObjectStoreArtifact: {
    bucket: ok(),
    key: ok(),
    endpoint: ok('host:port, or a URL'),
    region: ok(),
    insecure: ok('plain http'),
    accessKeySecret: rec('SecretKeySelector', 'one', 'given to the init and wait containers only'),
    secretKeySecret: rec('SecretKeySelector', 'one', 'given to the init and wait containers only'),
    createBucketIfNotPresent: rec('CreateBucketOptions'),
    roleARN: no('assuming a role is not implemented; use accessKeySecret and secretKeySecret'),
    useSDKCreds: no("the SDK's ambient credentials are not used: step pods carry no credentials but the Secrets named here"),
    encryptionOptions: no('server-side encryption options are not implemented yet'),
  },
  BlobStoreArtifact: {
    endpoint: ok('the URL of the storage account: https://ACCOUNT.blob.core.windows.net, or http://host:port/ACCOUNT'),
    container: ok('it must exist'),
    blob: ok(),
    accountKeySecret: rec('SecretKeySelector', 'one', 'the shared key of the account; given to the init and wait containers only'),
    useSDKCreds: no("the SDK's ambient credentials are not used: step pods carry no credentials but the Secrets named here"),
  },
  GcsArtifact: {
    bucket: ok(),
    key: ok(),
    serviceAccountKeySecret: rec('SecretKeySelector', 'one', "a service account's JSON key; given to the init and wait containers only"),
  },
  CreateBucketOptions: { objectLocking: no('object locking is not implemented yet') },
  HTTPArtifact: {
    url: ok(),
    headers: rec('HTTPArtifactHeader', 'list'),
    auth: rec('HTTPArtifactAuth'),
  },
  HTTPArtifactHeader: { name: ok(), value: ok() },
  HTTPArtifactAuth: {
    basicAuth: rec('BasicAuth'),
    clientCert: no('client certificates for http artifacts are not implemented yet'),
    oauth2: no('OAuth2 for http artifacts is not implemented yet'),
  },
  BasicAuth: {
    usernameSecret: rec('SecretKeySelector', 'one', 'given to the init container only'),
    passwordSecret: rec('SecretKeySelector', 'one', 'given to the init container only'),
  },
  RawArtifact: { data: ok() },
  GitArtifact: {
    repo: ok('an http(s) URL'),
    revision: ok('a branch, tag or commit id'),
    branch: ok(),
    singleBranch: ok(),
    depth: ok('a shallow clone'),
    disableSubmodules: ok('must be true for a repository with submodules (they are not fetched)'),
    usernameSecret: rec('SecretKeySelector', 'one', 'basic auth, given to the init container only'),
    passwordSecret: rec('SecretKeySelector', 'one', 'basic auth (or a token), given to the init container only'),
    sshPrivateKeySecret: rec('SecretKeySelector', 'one', 'SSH repositories (ssh://… or user@host:path); given to the init container only'),
    insecureIgnoreHostKey: ok("SSH: accept any host key; otherwise it must be in the controller's PLUGFLOW_GIT_KNOWN_HOSTS"),
    fetch: ok('extra refspecs fetched after the clone ([+]refs/SRC[:refs/DST], one * in both), so revision may name what only they reach'),
  },
  ArchiveStrategy: {
    tar: rec('TarStrategy', 'one', 'the default: tar + gzip'),
    none: ok('the file stored as it is (a directory needs tar)'),
    zip: no('zip unzips input artifacts (set it on the input); outputs are stored as tar (the default) or none'),
  },
  InputArchiveStrategy: {
    tar: rec('InputTarStrategy', 'one', 'a gzipped tar is unpacked (the default)'),
    none: ok('placed as fetched, even when it is a tarball'),
    zip: ok("unzipped: the archive's entries become the directory at path (links and names leaving it are refused)"),
  },
  TarStrategy: { compressionLevel: ok('gzip level 0-9') },
  InputTarStrategy: { compressionLevel: no('applies when an output is packed; an input is unpacked whatever its level') },
  ArtifactGC: {
    strategy: ok('OnWorkflowCompletion, OnWorkflowDeletion or Never (the default)'),
    serviceAccountName: ok('the service account of the GC pod'),
    podMetadata: rec('Metadata', 'one', 'labels and annotations of the GC pod'),
  },
  ArtifactGCOfArtifact: {
    strategy: ok('OnWorkflowCompletion, OnWorkflowDeletion or Never'),
    serviceAccountName: no("set it on spec.artifactGC: one GC pod deletes all of a strategy's artifacts"),
    podMetadata: no("set it on spec.artifactGC: one GC pod deletes all of a strategy's artifacts"),
  },
  ArtifactRepositoryRef: { configMap: ok('default artifact-repositories'), key: ok("default: the ConfigMap's default key") },
} satisfies Partial<Record<RecordName, Record<string, FieldRule>>>;

/** The locations an input or argument artifact can be fetched from. */
function artifactLocations(): Record<string, FieldRule> {
  return {
    vendorAObject: rec('ObjectStoreArtifact'),
    http: rec('HTTPArtifact'),
    raw: rec('RawArtifact'),
    git: rec('GitArtifact', 'one', 'cloned over http(s) before the main container starts'),
    vendorB: rec('BlobStoreArtifact'),
    vendorCObject: rec('GcsArtifact'),
    hdfs: no(OBJECT_STORE_ONLY),
    vendorDObject: no(OBJECT_STORE_ONLY),
    vendorO: no(OBJECT_STORE_ONLY),
  };
}

/** Locations an output cannot be stored in (fetch-only ones, and stores not implemented). */
function notStoredThere(): Record<string, FieldRule> {
  return {
    http: no(STORED_IN_STORE),
    raw: no(STORED_IN_STORE),
    git: no(STORED_IN_STORE),
    hdfs: no(STORED_IN_STORE),
    vendorDObject: no(OBJECT_STORE_ONLY),
    vendorO: no(OBJECT_STORE_ONLY),
  };
}

/** Fields of input and argument artifacts that only outputs (or the workflow) may set. */
function artifactRefusals(): Record<string, FieldRule> {
  return {
    artifactGC: no('only output artifacts (and spec.artifactGC) say when stored artifacts are deleted'),
    archiveLogs: no('set archiveLogs on the workflow, the template (archiveLocation.archiveLogs) or the repository'),
    deleted: no('plugflow does not mark collected artifacts; status.artifactGCStatus says what was collected'),
  };
}
