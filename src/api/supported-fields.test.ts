/**
 * The structural rule of issue 18 §5: every field of the CRD schemas is classified in
 * supported-fields.ts (supported or refused), and every classified field reaches the validator
 * (the API server would otherwise prune it before anyone could refuse it). A field added to the
 * schema without being implemented or refused fails here.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { crdDefinitions } from './crd/definitions.js';
import type { Schema } from './crd/schema-builders.js';
import { withFieldsDoc } from './supported-fields-doc.js';
import { CONTAINER_FIELDS, fieldRule, RECORD_NAMES, recordRules, type FieldShape, type RecordName } from './supported-fields.js';

/** The schema node holding the record of a field of the given shape. */
function recordNode(node: Schema, shape: FieldShape): Schema | undefined {
  if (shape === 'one') return node;
  if (shape === 'map') return node.additionalProperties;
  if (shape === 'list') return node.items;
  return node.items?.items;
}

function problemsOf(schema: Schema, record: RecordName, path: string, out: string[] = []): string[] {
  const props = schema.properties ?? {};
  for (const [field, child] of Object.entries(props)) {
    const rule = fieldRule(record, field);
    const at = `${path}.${field}`;
    if (!rule) {
      out.push(`${at}: in the CRD schema but neither supported nor refused in ${record} (src/api/supported-fields.ts)`);
      continue;
    }
    if (rule.status !== 'supported') continue;
    if (rule.record) {
      const node = recordNode(child, rule.shape ?? 'one');
      if (!node) out.push(`${at}: classified as ${rule.shape} of ${rule.record} but the schema has no such node`);
      else problemsOf(node, rule.record, at, out);
    } else {
      const inner = child.items ?? child.additionalProperties ?? child;
      if (inner.properties) out.push(`${at}: the schema types its fields but the list does not classify them (give it a record)`);
    }
  }
  // A classified field the schema neither declares nor keeps would be pruned silently.
  if (schema['x-kubernetes-preserve-unknown-fields'] !== true) {
    for (const field of Object.keys(recordRules(record))) {
      if (!Object.hasOwn(props, field))
        out.push(`${path}.${field}: classified in ${record} but the CRD schema would prune it; declare it in src/api/crd`);
    }
  }
  return out;
}

describe('supported fields (one list for the CRD schema and the engine)', () => {
  for (const crd of crdDefinitions().filter((c) =>
    ['Workflow', 'WorkflowTemplate', 'ClusterWorkflowTemplate'].includes(c.spec.names.kind),
  )) {
    it(`classifies every field of the ${crd.spec.names.kind} CRD schema`, () => {
      const spec = crd.spec.versions[0]!.schema.openAPIV3Schema.properties!.spec!;
      expect(problemsOf(spec, 'WorkflowSpec', 'spec')).toEqual([]);
    });
  }

  it("classifies every field of the CronWorkflow CRD's workflowSpec", () => {
    const crd = crdDefinitions().find((c) => c.spec.names.kind === 'CronWorkflow')!;
    const spec = crd.spec.versions[0]!.schema.openAPIV3Schema.properties!.spec!.properties!.workflowSpec!;
    expect(problemsOf(spec, 'WorkflowSpec', 'spec.workflowSpec')).toEqual([]);
  });

  it('fails on a schema field that is neither supported nor refused, and on one the schema would prune', () => {
    const schema: Schema = { type: 'object', properties: { name: { type: 'string' }, brandNew: { type: 'string' } } };
    const problems = problemsOf(schema, 'TemplateRef', 'x');
    expect(problems).toContain(
      'x.brandNew: in the CRD schema but neither supported nor refused in TemplateRef (src/api/supported-fields.ts)',
    );
    expect(problems).toContain('x.template: classified in TemplateRef but the CRD schema would prune it; declare it in src/api/crd');
  });

  it('classifies every field the spec documents list for the records the engine reads', () => {
    // Field names as spec documents 001 and 002 list them.
    const spec: Array<[RecordName[], string[]]> = [
      [
        ['Template'],
        [
          'activeDeadlineSeconds',
          'affinity',
          'archiveLocation',
          'automountServiceAccountToken',
          'container',
          'containerSet',
          'daemon',
          'dag',
          'data',
          'executor',
          'failFast',
          'hostAliases',
          'http',
          'initContainers',
          'inputs',
          'memoize',
          'metadata',
          'metrics',
          'name',
          'nodeSelector',
          'outputs',
          'parallelism',
          'plugin',
          'podSpecPatch',
          'priority',
          'priorityClassName',
          'resource',
          'retryStrategy',
          'schedulerName',
          'script',
          'securityContext',
          'serviceAccountName',
          'sidecars',
          'steps',
          'suspend',
          'synchronization',
          'timeout',
          'tolerations',
          'volumes',
        ],
      ],
      [
        ['WorkflowArgumentParameter', 'CallArgumentParameter', 'InputParameter', 'OutputParameter'],
        ['default', 'description', 'enum', 'globalName', 'name', 'value', 'valueFrom'],
      ],
      [
        ['ArgumentValueFrom', 'OutputValueFrom'],
        ['configMapKeyRef', 'default', 'event', 'expression', 'jqFilter', 'jsonPath', 'parameter', 'path', 'supplied'],
      ],
      [
        ['DAGTask'],
        [
          'arguments',
          'continueOn',
          'dependencies',
          'depends',
          'hooks',
          'inline',
          'name',
          'onExit',
          'template',
          'templateRef',
          'when',
          'withItems',
          'withParam',
          'withSequence',
        ],
      ],
      [['DAGTemplate'], ['failFast', 'target', 'tasks']],
      [['RetryStrategy'], ['affinity', 'backoff', 'expression', 'limit', 'retryPolicy']],
      [['Backoff'], ['duration', 'factor', 'maxDuration']],
      [['HTTP'], ['body', 'bodyFrom', 'headers', 'insecureSkipVerify', 'method', 'successCondition', 'timeoutSeconds', 'url']],
      [['HTTPHeader'], ['name', 'value', 'valueFrom']],
      [['Outputs'], ['artifacts', 'exitCode', 'parameters', 'result']],
      [
        ['WorkflowArguments', 'CallArguments', 'Inputs'],
        ['artifacts', 'parameters'],
      ],
      [['ContinueOn'], ['error', 'failed']],
      [['TemplateRef'], ['clusterScope', 'name', 'template']],
      [['SuspendTemplate'], ['duration']],
      [['Metadata'], ['annotations', 'labels']],
      [['ExecutorConfig'], ['serviceAccountName']],
      [['Container', 'ScriptTemplate', 'UserContainer'], [...CONTAINER_FIELDS]],
      [['ScriptTemplate'], ['source']],
      [['UserContainer'], ['mirrorVolumeMounts']],
    ];
    const missing = spec.flatMap(([records, fields]) =>
      records.flatMap((r) => fields.filter((f) => !fieldRule(r, f)).map((f) => `${r}.${f}`)),
    );
    expect(missing).toEqual([]);
  });

  it('refuses the fields issue 18 found silently ignored', () => {
    const refused = (r: RecordName, f: string) => fieldRule(r, f)?.status === 'refused';
    expect(refused('Template', 'priority')).toBe(true);
    // Daemon steps work (issue 12).
    expect(refused('Template', 'daemon')).toBe(false);
    expect(refused('WorkflowSpec', 'podPriority')).toBe(true);
    // Custom metrics work (issue 13) at both levels.
    expect(refused('WorkflowSpec', 'metrics') || refused('Template', 'metrics')).toBe(false);
    // Synchronization works (issue 13): mutexes and semaphores at both levels, and workflow priority orders their queues.
    for (const f of ['synchronization', 'priority']) expect(refused('WorkflowSpec', f), `WorkflowSpec.${f}`).toBe(false);
    expect(refused('Template', 'synchronization')).toBe(false);
    // Artifacts work (issue 11) except the locations and features not implemented yet.
    for (const r of ['InputArtifact', 'OutputArtifact', 'ArgumentArtifact'] as const)
      for (const f of ['archiveLogs', 'deleted', 'vendorDObject', 'vendorO', 'hdfs']) expect(refused(r, f), `${r}.${f}`).toBe(true);
    expect(refused('BlobStoreArtifact', 'useSDKCreds')).toBe(true);
    expect(refused('OutputArtifact', 'git')).toBe(true);
    expect(refused('InputArtifact', 'artifactGC') && refused('ArgumentArtifact', 'artifactGC')).toBe(true);
    expect(refused('ArchiveStrategy', 'zip')).toBe(true);
  });

  it("supports the peer's pod-level fields and template annotations, and refuses its database locks with a reason", () => {
    const status = (r: RecordName, f: string) => fieldRule(r, f)?.status;
    for (const r of ['WorkflowSpec', 'Template'] as const)
      for (const f of ['podResources', 'resourceClaims']) expect(status(r, f), `${r}.${f}`).toBe('supported');
    expect(status('Template', 'annotations')).toBe('supported');
    const mutex = fieldRule('Mutex', 'database');
    const semaphore = fieldRule('SemaphoreRef', 'database');
    expect(mutex?.status === 'refused' && mutex.reason).toMatch(/plain mutex/);
    expect(semaphore?.status === 'refused' && semaphore.reason).toMatch(/configMapKeyRef/);
  });

  it('never matches a key inherited from Object.prototype', () => {
    for (const r of RECORD_NAMES)
      for (const k of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) expect(fieldRule(r, k)).toBeUndefined();
  });
});

describe('the engine README lists exactly the supported and refused fields', () => {
  it('matches the rendering of the list (regenerate with npx tsx hack/gen-fields-doc.ts)', () => {
    const readme = readFileSync(join(import.meta.dirname, '../engine/README.md'), 'utf8');
    const wanted = withFieldsDoc(readme);
    expect(wanted, 'src/engine/README.md has the supported-fields markers').toBeDefined();
    expect(readme).toBe(wanted);
    expect(readme).toContain('| `Template.priority` |');
  });
});
