/**
 * The kind sections of a template other than the containers and the calls: http, resource,
 * containerSet, data and suspend. Each record is declared once (record-declaration.ts): its type,
 * CRD schema and catalogue rules derive from the declaration below.
 */
import { ARTIFACT_CRD_SCHEMA, type Artifact, type ArtifactPaths } from './artifact.js';
import type { SecretKeySelector, VolumeMount } from './container.js';
import { CONTAINER_NODE_RECORD, type ContainerNode } from './container-records.js';
import { arr, bool, int64, intOrString, obj, oneOfStrings, openObject, str } from './crd/schema-builders.js';
import { ok, rec } from './field-rules.js';
import { SECRET_KEY_SELECTOR_RECORD } from './common-records.js';
import { field, record, ref, type RecordOf } from './record-declaration.js';
import { MERGE_STRATEGIES, RESOURCE_ACTIONS } from './values/enums.js';
import type { IntOrString } from './values/scalars.js';

export const SUSPEND_TEMPLATE_RECORD = record('SuspendTemplate', {
  /** Seconds by default, or forms like `2m`, `6h`, `1d`. See values/duration.ts. */
  duration: field<string>(str({ description: 'Seconds by default, or forms like 2m, 6h, 1d.' })),
});
export interface SuspendTemplate extends RecordOf<typeof SUSPEND_TEMPLATE_RECORD.fields> {}

export const HTTP_HEADER_SOURCE_RECORD = record('HTTPHeaderSource', {
  secretKeyRef: ref<SecretKeySelector>(SECRET_KEY_SELECTOR_RECORD),
});

export const HTTP_HEADER_RECORD = record('HTTPHeader', {
  name: field<string>(str()).required(),
  value: field<string>(str()),
  valueFrom: ref<RecordOf<typeof HTTP_HEADER_SOURCE_RECORD.fields>>(HTTP_HEADER_SOURCE_RECORD),
});
export interface HTTPHeader extends RecordOf<typeof HTTP_HEADER_RECORD.fields> {}
export type HTTPHeaders = HTTPHeader[];

export const HTTP_BODY_SOURCE_RECORD = record('HTTPBodySource', {
  /** The bytes of the body, base64-encoded in JSON (how a list of bytes travels). */
  bytes: field<string>(str({ format: 'byte' })),
});
export interface HTTPBodySource extends RecordOf<typeof HTTP_BODY_SOURCE_RECORD.fields> {}

export const HTTP_RECORD = record('HTTP', {
  url: field<string>(str()).required(),
  /** Default GET. */
  method: field<string>(str()),
  headers: ref<HTTPHeaders>(HTTP_HEADER_RECORD, 'list'),
  body: field<string>(str()),
  bodyFrom: ref<HTTPBodySource>(HTTP_BODY_SOURCE_RECORD),
  /** Default 30. */
  timeoutSeconds: field<number>(int64()),
  insecureSkipVerify: field<boolean>(bool()),
  /** An expression; true means success. */
  successCondition: field<string>(str()),
});
export interface HTTP extends RecordOf<typeof HTTP_RECORD.fields> {}

export type ResourceAction = (typeof RESOURCE_ACTIONS)[number];
export type MergeStrategy = (typeof MERGE_STRATEGIES)[number];

export const MANIFEST_FROM_RECORD = record('ManifestFrom', {
  artifact: field<Artifact>(ARTIFACT_CRD_SCHEMA, rec('ManifestArtifact')).required(),
});
export interface ManifestFrom extends RecordOf<typeof MANIFEST_FROM_RECORD.fields> {}

export const RESOURCE_TEMPLATE_RECORD = record('ResourceTemplate', {
  action: field<ResourceAction>(oneOfStrings(RESOURCE_ACTIONS), ok('get, create, apply (server-side), delete, replace, patch')).required(),
  manifest: field<string>(str(), ok('one object (a list of operations for a json patch)')),
  manifestFrom: ref<ManifestFrom>(
    MANIFEST_FROM_RECORD,
    'one',
    "the manifest is an input artifact, fetched and printed by a pod of the step's own (its service account, no token), then applied by the controller as the step's account",
  ),
  /** Default `strategic`. */
  mergeStrategy: field<MergeStrategy>(oneOfStrings(MERGE_STRATEGIES), ok('patch: strategic (default), merge, json')),
  flags: field<string[]>(
    arr(str()),
    ok(
      'the kubectl arguments that mean something without kubectl: TYPE NAME, TYPE/NAME, -l/--selector, --field-selector, --all, -n, --cascade, --grace-period, --wait, --validate, --dry-run=server, --server-side, --force-conflicts, --ignore-not-found; any other is refused',
    ),
  ),
  setOwnerReference: field<boolean>(bool(), ok('the workflow becomes the owner of the created object')),
  successCondition: field<string>(
    str(),
    ok('label-selector syntax over paths into the object (status.succeeded > 2), re-read until it or the failure condition holds'),
  ),
  failureCondition: field<string>(str(), ok('as successCondition; any requirement that holds fails the step')),
});
export interface ResourceTemplate extends RecordOf<typeof RESOURCE_TEMPLATE_RECORD.fields> {}

export const CONTAINER_SET_RETRY_STRATEGY_RECORD = record('ContainerSetRetryStrategy', {
  retries: field<IntOrString>(intOrString(), ok("how many times a container's failed command is run again, in place")).required(),
  /** Between retries; units ns, us, ms, s, m, h. */
  duration: field<string>(str(), ok('the wait between two runs (a Go duration)')),
});
export interface ContainerSetRetryStrategy extends RecordOf<typeof CONTAINER_SET_RETRY_STRATEGY_RECORD.fields> {}

export const CONTAINER_SET_TEMPLATE_RECORD = record('ContainerSetTemplate', {
  containers: field<ContainerNode[]>(
    arr(obj({ name: str(), dependencies: arr(str()) }, { required: ['name'], open: true })),
    rec(CONTAINER_NODE_RECORD.name, 'list'),
  ).required(),
  volumeMounts: field<VolumeMount[]>(arr(openObject()), ok('mounted in every container of the set')),
  retryStrategy: ref<ContainerSetRetryStrategy>(CONTAINER_SET_RETRY_STRATEGY_RECORD),
});
export interface ContainerSetTemplate extends RecordOf<typeof CONTAINER_SET_TEMPLATE_RECORD.fields> {}

export const DATA_SOURCE_RECORD = record('DataSource', {
  artifactPaths: field<ArtifactPaths>(openObject(), rec('ArtifactPaths')),
});
export interface DataSource extends RecordOf<typeof DATA_SOURCE_RECORD.fields> {}

export const TRANSFORMATION_STEP_RECORD = record('TransformationStep', {
  expression: field<string>(str(), ok('an expression over `data` (filter(data, {# endsWith ".log"}), map(data, …), len(data))')).required(),
});
export interface TransformationStep extends RecordOf<typeof TRANSFORMATION_STEP_RECORD.fields> {}
export type Transformation = TransformationStep[];

export const DATA_RECORD = record('Data', {
  source: ref<DataSource>(DATA_SOURCE_RECORD).required(),
  transformation: ref<Transformation>(
    TRANSFORMATION_STEP_RECORD,
    'list',
    'applied in order, each to the value the previous one gave',
  ).required(),
});
export interface Data extends RecordOf<typeof DATA_RECORD.fields> {}
