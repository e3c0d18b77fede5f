/**
 * THE list of workflow fields plugflow implements and the ones it refuses (issue 18 §5: no field
 * is ever silently ignored), collected from the record declarations. Each record a workflow can
 * hold (spec documents 001 and 002, plus the peer's WorkflowSpec fields) is declared once, in
 * the module of its type (record-declaration.ts): every field with its type, its CRD schema and
 * its rule, `supported` (with a note) or `refused` with the reason users see. From there:
 *
 *   - the TypeScript types are derived (`interface Template extends RecordOf<...>`);
 *   - the CRD schemas are derived (crd/resource-schemas.ts takes WORKFLOW_SPEC_RECORD.schema);
 *   - the engine's validator (src/engine/validate-fields.ts) walks a workflow along the rules
 *     collected here and refuses every refused field present, naming its full path — on submit
 *     (CLI, REST server) and before the controller runs a workflow, for referenced
 *     WorkflowTemplates too;
 *   - the table in src/engine/README.md is generated from this list (hack/gen-fields-doc.ts) and
 *     a test checks that it matches.
 *
 * A supported field with `record` is walked further (its own fields are classified there); one
 * without is a leaf, or a Kubernetes record passed to the pod unchanged. A field that is in
 * neither list is refused as unknown (a typo, or a field of a newer peer version).
 *
 * Records are null-prototype maps so that user keys such as `constructor` never match.
 */

import type { FieldRule } from './field-rules.js';
import { isRecordDecl, type RecordDecl } from './record-declaration.js';
import * as artifact from './artifact.js';
import * as commonRecords from './common-records.js';
import * as containerRecords from './container-records.js';
import * as cronWorkflow from './cron-workflow.js';
import * as eventBinding from './event-binding.js';
import * as parameter from './parameter.js';
import * as taskSet from './taskset.js';
import * as template from './template.js';
import * as workflow from './workflow.js';
import * as workflowPlugin from './workflow-plugin.js';

export type { FieldRule, FieldShape } from './field-rules.js';

/** Every record a workflow can hold, by the spec's names (plus the contexts a Parameter is in). */
export const RECORD_NAMES = [
  'WorkflowSpec',
  'WorkflowTemplateRef',
  'PodGC',
  'TTLStrategy',
  'VolumeClaimGC',
  'WorkflowMetadata',
  'PodDisruptionBudget',
  'ExecutorConfig',
  'Metadata',
  'Template',
  'Container',
  'ScriptTemplate',
  'UserContainer',
  'ContainerSetTemplate',
  'ContainerNode',
  'ContainerSetRetryStrategy',
  'SuspendTemplate',
  'DAGTemplate',
  'WorkflowStep',
  'DAGTask',
  'ContinueOn',
  'Sequence',
  'TemplateRef',
  'LifecycleHook',
  'WorkflowArguments',
  'CallArguments',
  'Inputs',
  'Outputs',
  'WorkflowArgumentParameter',
  'CallArgumentParameter',
  'ArgumentValueFrom',
  'InputParameter',
  'InputValueFrom',
  'ParameterConfigMapKeyRef',
  'OutputParameter',
  'OutputValueFrom',
  'RetryStrategy',
  'Backoff',
  'RetryAffinity',
  'ResourceTemplate',
  'ManifestFrom',
  'ManifestArtifact',
  'HTTP',
  'HTTPHeader',
  'HTTPHeaderSource',
  'HTTPBodySource',
  'SecretKeySelector',
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
  'Memoize',
  'MemoizeCache',
  'MemoizeCacheConfigMap',
  'Synchronization',
  'Mutex',
  'SemaphoreRef',
  'SemaphoreConfigMapKeyRef',
  'Metrics',
  'VendorP',
  'MetricCounter',
  'MetricGauge',
  'MetricHistogram',
  'MetricLabel',
  'ExecutorPlugin',
  'ExecutorPluginMetadata',
  'ExecutorPluginSpec',
  'ExecutorPluginSidecar',
] as const;

/**
 * The records of the other resources users write or plugflow keeps (a CronWorkflow's spec, an
 * event binding's, a TaskSet's). Their CRDs prune unknown fields, so the workflow validator
 * never walks them; they are declared the same way, and their rules are here for completeness.
 */
export const RESOURCE_RECORD_NAMES = [
  'CronWorkflowSpec',
  'StopStrategy',
  'CatchUp',
  'Backfill',
  'WorkflowEventBindingSpec',
  'EventSelector',
  'EventSubmit',
  'EventWorkflowTemplateRef',
  'EventSubmitMetadata',
  'WorkflowTaskSetSpec',
  'WorkflowTaskSetStatus',
] as const;

export type RecordName = (typeof RECORD_NAMES)[number] | (typeof RESOURCE_RECORD_NAMES)[number];

/**
 * The records declared once with their types and CRD schemas (record-declaration.ts): every
 * declaration the record modules export (template.ts re-exports the template's own modules).
 */
const DECLARED: readonly RecordDecl[] = [
  ...new Set(
    [artifact, commonRecords, containerRecords, cronWorkflow, eventBinding, parameter, taskSet, template, workflow, workflowPlugin]
      .flatMap((m) => Object.values(m))
      .filter(isRecordDecl),
  ),
];

const RECORDS = Object.fromEntries(DECLARED.map((d) => [d.name, d.rules])) as Record<RecordName, Record<string, FieldRule>>;
// A name listed above without a declaration, or declared twice, is a mistake of the declarations.
for (const name of [...RECORD_NAMES, ...RESOURCE_RECORD_NAMES])
  if (!RECORDS[name]) throw new Error(`supported-fields: record ${name} is not declared`);
{
  const names = DECLARED.map((d) => d.name);
  const extra = names.filter((n, i) => names.indexOf(n) !== i || ![...RECORD_NAMES, ...RESOURCE_RECORD_NAMES].includes(n));
  if (extra.length > 0) throw new Error(`supported-fields: declared twice or not in RECORD_NAMES: ${extra.join(', ')}`);
}

/** The rules of `record`, as a null-prototype map (user keys never reach Object.prototype). */
const FROZEN: Readonly<Record<string, Readonly<Record<string, FieldRule>>>> = Object.freeze(
  Object.fromEntries(
    Object.entries(RECORDS).map(([name, fields]) => [
      name,
      Object.freeze(Object.assign(Object.create(null) as Record<string, FieldRule>, fields)),
    ]),
  ),
);

export function recordRules(record: RecordName): Readonly<Record<string, FieldRule>> {
  return FROZEN[record]!;
}

/** The rule for `field` of `record`, or undefined when the record has no such field. */
export function fieldRule(record: RecordName, field: string): FieldRule | undefined {
  const rules = recordRules(record);
  return Object.hasOwn(rules, field) ? rules[field] : undefined;
}

export { CONTAINER_FIELDS } from './container-records.js';
