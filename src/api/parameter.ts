/**
 * Parameters, arguments, inputs and outputs (spec document 001, "Parameters" and "Outputs").
 * Each record is declared once (record-declaration.ts); a parameter and its valueFrom are one
 * type and one CRD schema used in several contexts, each context a variant with its own rules.
 */
import { ARTIFACT_CRD_SCHEMA, type Artifact } from './artifact.js';
import type { ConfigMapKeySelector } from './container.js';
import { anyValue, arr, bool, emptyObject, str } from './crd/schema-builders.js';
import { no, ok, rec, type FieldRule } from './field-rules.js';
import { field, record, ref, variant, type RecordOf } from './record-declaration.js';
import type { AnyString } from './values/scalars.js';

/** Empty-object shape: the value is supplied later (for example by resuming a suspend node). */
export type SuppliedValueFrom = Record<string, never>;

export const PARAMETER_CONFIG_MAP_KEY_REF_RECORD = record('ParameterConfigMapKeyRef', {
  name: field<string>(str()),
  key: field<string>(str()).required(),
  optional: field<boolean>(bool(), ok('a missing ConfigMap or key gives "" instead of an error (a default wins over it)')),
});

/**
 * Where a parameter's value comes from, with the rules of an output parameter's; the argument
 * and input contexts are variants with their own rules.
 */
export const OUTPUT_VALUE_FROM_RECORD = record('OutputValueFrom', {
  /** Path in the container (container templates). */
  path: field<string>(str(), ok('container and script templates')),
  /** Reference to a step or DAG task output. */
  parameter: field<string>(str()),
  expression: field<string>(str()),
  supplied: field<SuppliedValueFrom>(emptyObject(), ok('suspend templates')),
  default: field<AnyString>(anyValue()),
  /** Resource templates. */
  jsonPath: field<string>(str(), ok("resource templates: kubectl's JSONPath over the object, as `kubectl get -o jsonpath` prints it")),
  /** Against the resource object in resource templates. */
  jqFilter: field<string>(
    str(),
    ok('resource templates: jq over the object (each result on a line, strings raw), in a worker with a time and memory bound'),
  ),
  configMapKeyRef: field<ConfigMapKeySelector>(
    PARAMETER_CONFIG_MAP_KEY_REF_RECORD.schema,
    no('output parameters come from the step; a ConfigMap value is read by an input or argument parameter'),
  ),
  /** Selector evaluated against an event (event bindings). */
  event: field<string>(str({ description: 'Expression over the event (event bindings).' }), no('only event bindings read it')),
});
export interface ValueFrom extends RecordOf<typeof OUTPUT_VALUE_FROM_RECORD.fields> {}

/** The value sources a context does not read, refused with why. */
function refusedValueSources(why: string): Record<string, FieldRule> {
  const out: Record<string, FieldRule> = {};
  for (const k of ['configMapKeyRef', 'event', 'expression', 'jqFilter', 'jsonPath', 'parameter', 'path', 'supplied'])
    out[k] = no(`this source is not read here: ${why}`);
  return out;
}

export const ARGUMENT_VALUE_FROM = variant(OUTPUT_VALUE_FROM_RECORD, 'ArgumentValueFrom', {
  ...refusedValueSources('arguments take a value, a ConfigMap key (valueFrom.configMapKeyRef) or valueFrom.default'),
  default: ok(),
  configMapKeyRef: rec(
    PARAMETER_CONFIG_MAP_KEY_REF_RECORD.name,
    'one',
    'the value of a key of a ConfigMap labelled workflows.plugflow.io/configmap-type=Parameter',
  ),
});
export const INPUT_VALUE_FROM = variant(OUTPUT_VALUE_FROM_RECORD, 'InputValueFrom', {
  ...refusedValueSources("input parameters take the call's argument, a ConfigMap key (valueFrom.configMapKeyRef), value or default"),
  default: ok(),
  configMapKeyRef: rec(PARAMETER_CONFIG_MAP_KEY_REF_RECORD.name, 'one', 'used when the call passes no argument of that name'),
});

const NO_GLOBAL_NAME = no('only output parameters are exported with globalName');

/** A parameter; its rules differ by where it is written (the variants below). */
export const INPUT_PARAMETER_RECORD = record('InputParameter', {
  name: field<string>(str({ minLength: 1 })).required(),
  value: field<AnyString>(anyValue()),
  default: field<AnyString>(anyValue()),
  description: field<AnyString>(anyValue(), ok('documentation only')),
  /** Allowed values. */
  enum: field<AnyString[]>(arr(anyValue()), ok('the value must be one of these')),
  valueFrom: ref<ValueFrom>(INPUT_VALUE_FROM),
  /** Exports an output parameter to global scope. */
  globalName: field<string>(str(), NO_GLOBAL_NAME),
});
export interface Parameter extends RecordOf<typeof INPUT_PARAMETER_RECORD.fields> {}

export const WORKFLOW_ARGUMENT_PARAMETER = variant(INPUT_PARAMETER_RECORD, 'WorkflowArgumentParameter', {
  valueFrom: rec(ARGUMENT_VALUE_FROM.name),
});
export const CALL_ARGUMENT_PARAMETER = variant(INPUT_PARAMETER_RECORD, 'CallArgumentParameter', {
  default: no("an argument takes a value; put the default on the template's input parameter"),
  enum: no("put the allowed values on the template's input parameter"),
  valueFrom: rec(ARGUMENT_VALUE_FROM.name),
});
export const OUTPUT_PARAMETER = variant(INPUT_PARAMETER_RECORD, 'OutputParameter', {
  enum: ok('checked when the value is supplied on resume'),
  globalName: ok(),
  valueFrom: rec(OUTPUT_VALUE_FROM_RECORD.name),
});

export type Artifacts = Artifact[];

/** Arguments of a workflow (spec.arguments); a call's are the CallArguments variant. */
export const WORKFLOW_ARGUMENTS_RECORD = record('WorkflowArguments', {
  parameters: ref<Parameter[]>(WORKFLOW_ARGUMENT_PARAMETER, 'list'),
  artifacts: field<Artifacts>(arr(ARTIFACT_CRD_SCHEMA), rec('ArgumentArtifact', 'list')),
});
export interface Arguments extends RecordOf<typeof WORKFLOW_ARGUMENTS_RECORD.fields> {}

export const CALL_ARGUMENTS_RECORD = variant(WORKFLOW_ARGUMENTS_RECORD, 'CallArguments', {
  parameters: rec(CALL_ARGUMENT_PARAMETER.name, 'list'),
});

/** Template inputs (fields not shown by the spec; the same pair as Arguments). */
export const INPUTS_RECORD = record('Inputs', {
  parameters: ref<Parameter[]>(INPUT_PARAMETER_RECORD, 'list'),
  artifacts: field<Artifacts>(arr(ARTIFACT_CRD_SCHEMA), rec('InputArtifact', 'list', 'fetched before the main container starts')),
});
export interface Inputs extends RecordOf<typeof INPUTS_RECORD.fields> {}

export const OUTPUTS_RECORD = record('Outputs', {
  parameters: ref<Parameter[]>(OUTPUT_PARAMETER, 'list'),
  artifacts: field<Artifacts>(arr(ARTIFACT_CRD_SCHEMA), rec('OutputArtifact', 'list', 'packed and uploaded after the main container ends')),
  /** Stdout of a script template (or the body of an http template). */
  result: field<string>(str(), no('plugflow fills it in when the step runs (its standard output); a template cannot set it')),
  /** Exit code of a script/container template, as a string. */
  exitCode: field<string>(str(), no('plugflow fills it in when the step runs; a template cannot set it')),
});
export interface Outputs extends RecordOf<typeof OUTPUTS_RECORD.fields> {}
