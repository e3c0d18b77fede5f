/**
 * The artifact records of THE list of supported and refused fields (supported-fields.ts, which
 * spreads these into its records): inputs, outputs and arguments, the locations they are fetched
 * from and stored in, archives, artifact GC and repositories (issue 11).
 */
import { no, ok, rec, type FieldRule } from './field-rules.js';
import type { RecordName } from './supported-fields.js';

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

/** The names of the artifact records and of the data template (which lists artifacts), in the order THE list (supported-fields.ts) spreads them. */
export const ARTIFACT_RECORD_NAMES = [
  'ArtifactPaths',
  'Data',
  'DataSource',
  'TransformationStep',
  'InputArtifact',
  'OutputArtifact',
  'ArgumentArtifact',
  'ArchiveLocation',
  'ObjectStoreArtifact',
  'BlobStoreArtifact',
  'GcsArtifact',
  'CreateBucketOptions',
  'HTTPArtifact',
  'HTTPArtifactHeader',
  'HTTPArtifactAuth',
  'BasicAuth',
  'OAuth2Auth',
  'OAuth2EndpointParam',
  'ClientCertAuth',
  'PluginArtifact',
  'RawArtifact',
  'GitArtifact',
  'ArchiveStrategy',
  'InputArchiveStrategy',
  'InputTarStrategy',
  'TarStrategy',
  'ArtifactRepositoryRef',
  'ArtifactGC',
  'ArtifactGCOfArtifact',
] as const;

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
    hdfs: no(HDFS),
    vendorDObject: no(OSS),
    vendorO: no(ARTIFACTORY),
    plugin: no(LISTED_IN_STORE),
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
    plugin: rec('PluginArtifact', 'one', 'its key is a key format like the repository one'),
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
  PluginArtifact: {
    name: ok(
      'an artifact driver registered with the controller (PLUGFLOW_ARTIFACT_DRIVERS); another name is refused when the workflow starts',
    ),
    configuration: ok('passed to the driver as written; put no credentials in it (it is in the workflow and its status)'),
    key: ok("the artifact's place in the driver's store"),
    connectionTimeoutSeconds: ok("how long the driver's socket may take to accept a connection (default: the driver's, else 5)"),
  },
  CreateBucketOptions: { objectLocking: no('object locking is not implemented yet') },
  HTTPArtifact: {
    url: ok('inputs: GET; outputs: PUT'),
    headers: rec('HTTPArtifactHeader', 'list', "sent to the url's origin only, not after a redirect to another"),
    auth: rec('HTTPArtifactAuth'),
    saveStreamViaFile: ok('outputs are always uploaded from a file, so a 307/308 redirect is always followed'),
  },
  HTTPArtifactHeader: { name: ok(), value: ok() },
  HTTPArtifactAuth: {
    basicAuth: rec('BasicAuth'),
    clientCert: rec('ClientCertAuth', 'one', "a TLS client certificate presented to the url's origin only"),
    oauth2: rec('OAuth2Auth', 'one', "the client-credentials grant; the bearer token is sent to the url's origin only"),
  },
  BasicAuth: {
    usernameSecret: rec('SecretKeySelector', 'one', 'given to the init and wait containers only'),
    passwordSecret: rec('SecretKeySelector', 'one', 'given to the init and wait containers only'),
  },
  OAuth2Auth: {
    clientIDSecret: rec('SecretKeySelector', 'one', 'required; given to the init and wait containers only'),
    clientSecretSecret: rec('SecretKeySelector', 'one', 'required; given to the init and wait containers only'),
    tokenURLSecret: rec('SecretKeySelector', 'one', 'required; the token endpoint (form POST, its redirects not followed)'),
    scopes: ok('sent space-separated as scope'),
    endpointParams: rec('OAuth2EndpointParam', 'list', 'more fields of the token request'),
  },
  OAuth2EndpointParam: { key: ok(), value: ok() },
  ClientCertAuth: {
    clientCertSecret: rec('SecretKeySelector', 'one', 'the PEM certificate (chain); given to the init and wait containers only'),
    clientKeySecret: rec('SecretKeySelector', 'one', 'its PEM private key; given to the init and wait containers only'),
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
    plugin: rec('PluginArtifact', 'one', 'loaded by the artifact driver the controller runs beside the step'),
    hdfs: no(HDFS),
    vendorDObject: no(OSS),
    vendorO: no(ARTIFACTORY),
  };
}

/** Locations an output cannot be stored in (fetch-only ones, and stores not implemented). */
function notStoredThere(): Record<string, FieldRule> {
  return {
    http: no("a template's archive location is a store; give http on each output artifact instead"),
    raw: no(STORED_IN_STORE),
    git: no(STORED_IN_STORE),
    hdfs: no(STORED_IN_STORE),
    vendorDObject: no(OSS),
    vendorO: no(ARTIFACTORY),
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
