/**
 * How a template calls others: steps, DAG tasks, lifecycle hooks and the references and loops
 * they use. Each record is declared once (record-declaration.ts): its type, CRD schema and
 * catalogue rules derive from the declaration below.
 */
import { anyValue, arr, bool, fieldName, intOrString, keyedList, openObject, str } from './crd/schema-builders.js';
import { ok, rec } from './field-rules.js';
import { CALL_ARGUMENTS_RECORD, type Arguments } from './parameter.js';
import { field, record, ref, type RecordOf } from './record-declaration.js';
import type { Template } from './template.js';
import type { IntOrString } from './values/scalars.js';

/** A `withItems` element: any JSON value. */
export type Item = unknown;

/** `withSequence`: numbers from start to end (or count of them), each formatted by `format`. */
export const SEQUENCE_RECORD = record('Sequence', {
  count: field<IntOrString>(intOrString()),
  start: field<IntOrString>(intOrString()),
  end: field<IntOrString>(intOrString()),
  /** printf-style format, e.g. `%02d`. */
  format: field<string>(str()),
});
export interface Sequence extends RecordOf<typeof SEQUENCE_RECORD.fields> {}

/**
 * Reference to a template inside a WorkflowTemplate or ClusterWorkflowTemplate. `name` and
 * `template` are required by the validator, which names the missing one; the CRD leaves them
 * optional so that its message is the one users get.
 */
export const TEMPLATE_REF_RECORD = record('TemplateRef', {
  /** Resource name. */
  name: field<string>(str()).requiredByValidator(),
  /** Template name within the resource. */
  template: field<string>(str()).requiredByValidator(),
  /** The referred resource is a ClusterWorkflowTemplate. */
  clusterScope: field<boolean>(bool()),
});
export interface TemplateRef extends RecordOf<typeof TEMPLATE_REF_RECORD.fields> {}

/** A hook run on an event of a step, task or workflow (`exit`, or an expression). */
export const LIFECYCLE_HOOK_RECORD = record('LifecycleHook', {
  template: field<string>(str()),
  templateRef: ref<TemplateRef>(TEMPLATE_REF_RECORD),
  arguments: ref<Arguments>(CALL_ARGUMENTS_RECORD),
  /** Runs the hook when the expression becomes true. */
  expression: field<string>(str(), ok('when the hook runs (every hook but exit needs one); see Lifecycle hooks')),
});
export interface LifecycleHook extends RecordOf<typeof LIFECYCLE_HOOK_RECORD.fields> {}

/** Hooks by name; the name `exit` runs when the step/workflow ends. */
export type LifecycleHooks = Record<string, LifecycleHook>;

/** `hooks` of a workflow, step or task. */
export function hooksField() {
  return ref<LifecycleHooks>(LIFECYCLE_HOOK_RECORD, 'map', 'exit, and conditional hooks with an expression', {
    extra: { description: 'Hooks by name; `exit` runs when the step, task or workflow ends.' },
  });
}

/** Whether a step's failure or error lets the caller continue. */
export const CONTINUE_ON_RECORD = record('ContinueOn', {
  error: field<boolean>(bool()),
  failed: field<boolean>(bool()),
});
export interface ContinueOn extends RecordOf<typeof CONTINUE_ON_RECORD.fields> {}

/** Fields shared by steps and DAG tasks (the spec's call fields). */
function callFields() {
  return {
    template: field<string>(str()),
    templateRef: ref<TemplateRef>(TEMPLATE_REF_RECORD),
    /** A template written in place; the peer lets it go without a name, plugflow types it as a full Template. */
    inline: field<Template>(
      openObject({ description: 'An inline template (not validated here; the engine checks it).' }),
      rec('Template', 'one', 'an inline template'),
    ),
    arguments: ref<Arguments>(CALL_ARGUMENTS_RECORD),
    when: field<string>(str()),
    withItems: field<Item[]>(arr(anyValue())),
    /** A JSON list. */
    withParam: field<string>(str()),
    withSequence: ref<Sequence>(SEQUENCE_RECORD),
    continueOn: ref<ContinueOn>(CONTINUE_ON_RECORD),
    hooks: hooksField(),
    /** Deprecated: use the `exit` hook. */
    onExit: field<string>(str({ description: 'Deprecated: use the exit hook.' })),
  };
}

/** One step of a steps template (fields not shown by the spec; those of DAGTask that apply). */
export const WORKFLOW_STEP_RECORD = record('WorkflowStep', { name: field<string>(fieldName('Step name.')), ...callFields() });
export interface WorkflowStep extends RecordOf<typeof WORKFLOW_STEP_RECORD.fields> {}

/** Steps that run in parallel; `steps` is a list of these groups, run one after another. */
export type ParallelSteps = WorkflowStep[];

export const DAG_TASK_RECORD = record('DAGTask', {
  name: field<string>(fieldName('Task name, unique within the DAG.')).required(),
  ...callFields(),
  dependencies: field<string[]>(arr(str())),
  depends: field<string>(str()),
});
export interface DAGTask extends RecordOf<typeof DAG_TASK_RECORD.fields> {}

export const DAG_TEMPLATE_RECORD = record('DAGTemplate', {
  tasks: field<DAGTask[]>(keyedList(DAG_TASK_RECORD.schema, 'name'), rec('DAGTask', 'list')).required(),
  /** Default true; when false all branches run to completion. */
  failFast: field<boolean>(bool()),
  /** Names of target tasks (space separated). */
  target: field<string>(str()),
});
export interface DAGTemplate extends RecordOf<typeof DAG_TEMPLATE_RECORD.fields> {}
