/**
 * Where artifacts are fetched from and stored: the object stores, HTTP with its authentication,
 * raw data, git and artifact driver plugins (spec document 001, "Artifacts"), each declared once
 * (record-declaration.ts). The locations plugflow refuses as a whole keep a plain interface: every
 * field of them is refused where they appear (artifact.ts), so there is nothing to derive.
 */
import { SECRET_KEY_SELECTOR_RECORD } from './common-records.js';
import type { ConfigMapKeySelector, SecretKeySelector } from './container.js';
import { arr, bool, int32, openObject, str } from './crd/schema-builders.js';
import { no, ok } from './field-rules.js';
import { field, record, ref, type FieldDecl, type RecordOf } from './record-declaration.js';

const INIT_AND_WAIT = 'given to the init and wait containers only';

/** A Secret key holding a credential, with what is done with it. */
function secret(note: string): FieldDecl<SecretKeySelector, false> {
  return ref<SecretKeySelector>(SECRET_KEY_SELECTOR_RECORD, 'one', note);
}

/* ---- Locations plugflow refuses: typed for the code, no record (every field of them refused). ---- */

export interface VendorOArtifact {
  passwordSecret?: SecretKeySelector;
  url?: string;
  usernameSecret?: SecretKeySelector;
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

export interface VendorAEncryptionOptions {
  enableEncryption?: boolean;
  kmsEncryptionContext?: string;
  kmsKeyId?: string;
  serverSideCustomerKeySecret?: SecretKeySelector;
}

/* ---- Object stores. ---- */

export const CREATE_BUCKET_OPTIONS_RECORD = record('CreateBucketOptions', {
  objectLocking: field<boolean>(bool(), no('object locking is not implemented yet')),
});

const NO_SDK_CREDS = no("the SDK's ambient credentials are not used: step pods carry no credentials but the Secrets named here");

export const OBJECT_STORE_ARTIFACT_RECORD = record('ObjectStoreArtifact', {
  bucket: field<string>(str()),
  key: field<string>(str()),
  endpoint: field<string>(str(), ok('host:port, or a URL')),
  region: field<string>(str()),
  insecure: field<boolean>(bool(), ok('plain http')),
  accessKeySecret: secret(INIT_AND_WAIT),
  secretKeySecret: secret(INIT_AND_WAIT),
  createBucketIfNotPresent: ref<RecordOf<typeof CREATE_BUCKET_OPTIONS_RECORD.fields>>(CREATE_BUCKET_OPTIONS_RECORD),
  roleARN: field<string>(str(), no('assuming a role is not implemented; use accessKeySecret and secretKeySecret')),
  useSDKCreds: field<boolean>(bool(), NO_SDK_CREDS),
  encryptionOptions: field<VendorAEncryptionOptions>(openObject(), no('server-side encryption options are not implemented yet')),
});
export interface VendorAObjectArtifact extends RecordOf<typeof OBJECT_STORE_ARTIFACT_RECORD.fields> {}

export const BLOB_STORE_ARTIFACT_RECORD = record('BlobStoreArtifact', {
  endpoint: field<string>(str(), ok('the URL of the storage account: https://ACCOUNT.blob.core.windows.net, or http://host:port/ACCOUNT')),
  container: field<string>(str(), ok('it must exist')),
  blob: field<string>(str()),
  accountKeySecret: secret(`the shared key of the account; ${INIT_AND_WAIT}`),
  useSDKCreds: field<boolean>(bool(), NO_SDK_CREDS),
});
export interface VendorBArtifact extends RecordOf<typeof BLOB_STORE_ARTIFACT_RECORD.fields> {}

export const GCS_ARTIFACT_RECORD = record('GcsArtifact', {
  bucket: field<string>(str()),
  key: field<string>(str()),
  serviceAccountKeySecret: secret(`a service account's JSON key; ${INIT_AND_WAIT}`),
});
export interface VendorCObjectArtifact extends RecordOf<typeof GCS_ARTIFACT_RECORD.fields> {}

/* ---- HTTP. ---- */

export const HTTP_ARTIFACT_HEADER_RECORD = record('HTTPArtifactHeader', {
  name: field<string>(str()).required(),
  value: field<string>(str()).required(),
});
export interface HTTPArtifactHeader extends RecordOf<typeof HTTP_ARTIFACT_HEADER_RECORD.fields> {}

export const BASIC_AUTH_RECORD = record('BasicAuth', {
  usernameSecret: secret(INIT_AND_WAIT),
  passwordSecret: secret(INIT_AND_WAIT),
});

export const OAUTH2_ENDPOINT_PARAM_RECORD = record('OAuth2EndpointParam', {
  key: field<string>(str()).required(),
  value: field<string>(str()),
});

export const OAUTH2_AUTH_RECORD = record('OAuth2Auth', {
  clientIDSecret: secret(`required; ${INIT_AND_WAIT}`),
  clientSecretSecret: secret(`required; ${INIT_AND_WAIT}`),
  tokenURLSecret: secret('required; the token endpoint (form POST, its redirects not followed)'),
  scopes: field<string[]>(arr(str()), ok('sent space-separated as scope')),
  endpointParams: ref<Array<RecordOf<typeof OAUTH2_ENDPOINT_PARAM_RECORD.fields>>>(
    OAUTH2_ENDPOINT_PARAM_RECORD,
    'list',
    'more fields of the token request',
  ),
});

export const CLIENT_CERT_AUTH_RECORD = record('ClientCertAuth', {
  clientCertSecret: secret(`the PEM certificate (chain); ${INIT_AND_WAIT}`),
  clientKeySecret: secret(`its PEM private key; ${INIT_AND_WAIT}`),
});

export const HTTP_ARTIFACT_AUTH_RECORD = record('HTTPArtifactAuth', {
  basicAuth: ref<RecordOf<typeof BASIC_AUTH_RECORD.fields>>(BASIC_AUTH_RECORD),
  clientCert: ref<RecordOf<typeof CLIENT_CERT_AUTH_RECORD.fields>>(
    CLIENT_CERT_AUTH_RECORD,
    'one',
    "a TLS client certificate presented to the url's origin only",
  ),
  oauth2: ref<RecordOf<typeof OAUTH2_AUTH_RECORD.fields>>(
    OAUTH2_AUTH_RECORD,
    'one',
    "the client-credentials grant; the bearer token is sent to the url's origin only",
  ),
});
export interface HTTPAuth extends RecordOf<typeof HTTP_ARTIFACT_AUTH_RECORD.fields> {}

export const HTTP_ARTIFACT_RECORD = record('HTTPArtifact', {
  url: field<string>(str(), ok('inputs: GET; outputs: PUT')).required(),
  headers: ref<HTTPArtifactHeader[]>(HTTP_ARTIFACT_HEADER_RECORD, 'list', "sent to the url's origin only, not after a redirect to another"),
  auth: ref<HTTPAuth>(HTTP_ARTIFACT_AUTH_RECORD),
  saveStreamViaFile: field<boolean>(bool(), ok('outputs are always uploaded from a file, so a 307/308 redirect is always followed')),
});
export interface HTTPArtifact extends RecordOf<typeof HTTP_ARTIFACT_RECORD.fields> {}

/* ---- Raw, git, driver plugins. ---- */

export const RAW_ARTIFACT_RECORD = record('RawArtifact', { data: field<string>(str()).required() });
export interface RawArtifact extends RecordOf<typeof RAW_ARTIFACT_RECORD.fields> {}

export const GIT_ARTIFACT_RECORD = record('GitArtifact', {
  repo: field<string>(str(), ok('an http(s) URL')).required(),
  revision: field<string>(str(), ok('a branch, tag or commit id')),
  branch: field<string>(str()),
  singleBranch: field<boolean>(bool()),
  depth: field<number>(int32(), ok('a shallow clone')),
  disableSubmodules: field<boolean>(bool(), ok('must be true for a repository with submodules (they are not fetched)')),
  usernameSecret: secret('basic auth, given to the init container only'),
  passwordSecret: secret('basic auth (or a token), given to the init container only'),
  sshPrivateKeySecret: secret('SSH repositories (ssh://… or user@host:path); given to the init container only'),
  insecureIgnoreHostKey: field<boolean>(
    bool(),
    ok("SSH: accept any host key; otherwise it must be in the controller's PLUGFLOW_GIT_KNOWN_HOSTS"),
  ),
  fetch: field<string[]>(
    arr(str()),
    ok('extra refspecs fetched after the clone ([+]refs/SRC[:refs/DST], one * in both), so revision may name what only they reach'),
  ),
});
export interface GitArtifact extends RecordOf<typeof GIT_ARTIFACT_RECORD.fields> {}

/** An artifact kept by an artifact driver plugin (the name an operator registered it under). */
export const PLUGIN_ARTIFACT_RECORD = record('PluginArtifact', {
  name: field<string>(
    str(),
    ok('an artifact driver registered with the controller (PLUGFLOW_ARTIFACT_DRIVERS); another name is refused when the workflow starts'),
  ),
  /** Free-form settings for the driver, passed as written. */
  configuration: field<string>(
    str(),
    ok('passed to the driver as written; put no credentials in it (it is in the workflow and its status)'),
  ),
  key: field<string>(str(), ok("the artifact's place in the driver's store")),
  connectionTimeoutSeconds: field<number>(
    int32(),
    ok("how long the driver's socket may take to accept a connection (default: the driver's, else 5)"),
  ),
});
export interface PluginArtifact extends RecordOf<typeof PLUGIN_ARTIFACT_RECORD.fields> {}
