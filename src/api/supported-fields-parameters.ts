/**
 * The parameter records of THE list of supported and refused fields (supported-fields.ts, which
 * spreads these into its records): workflow, call, input and output parameters and where their
 * values come from.
 */
import { no, ok, rec, type FieldRule } from './field-rules.js';
import type { RecordName } from './supported-fields.js';

export const PARAMETER_RECORDS = {
  WorkflowArgumentParameter: {
    name: ok(),
    value: ok(),
    default: ok(),
    description: ok('documentation only'),
    enum: ok('the value must be one of these'),
    valueFrom: rec('ArgumentValueFrom'),
    globalName: no('only output parameters are exported with globalName'),
  },
  CallArgumentParameter: {
    name: ok(),
    value: ok(),
    default: no("an argument takes a value; put the default on the template's input parameter"),
    description: ok('documentation only'),
    enum: no("put the allowed values on the template's input parameter"),
    valueFrom: rec('ArgumentValueFrom'),
    globalName: no('only output parameters are exported with globalName'),
  },
  ArgumentValueFrom: {
    ...refusedValueSources('arguments take a value, a ConfigMap key (valueFrom.configMapKeyRef) or valueFrom.default'),
    default: ok(),
    configMapKeyRef: rec(
      'ParameterConfigMapKeyRef',
      'one',
      'the value of a key of a ConfigMap labelled workflows.plugflow.io/configmap-type=Parameter',
    ),
  },
  InputValueFrom: {
    ...refusedValueSources("input parameters take the call's argument, a ConfigMap key (valueFrom.configMapKeyRef), value or default"),
    default: ok(),
    configMapKeyRef: rec('ParameterConfigMapKeyRef', 'one', 'used when the call passes no argument of that name'),
  },
  ParameterConfigMapKeyRef: {
    name: ok(),
    key: ok(),
    optional: ok('a missing ConfigMap or key gives "" instead of an error (a default wins over it)'),
  },
  InputParameter: {
    name: ok(),
    value: ok(),
    default: ok(),
    description: ok('documentation only'),
    enum: ok('the value must be one of these'),
    valueFrom: rec('InputValueFrom'),
    globalName: no('only output parameters are exported with globalName'),
  },
  OutputParameter: {
    name: ok(),
    value: ok(),
    default: ok(),
    description: ok('documentation only'),
    enum: ok('checked when the value is supplied on resume'),
    globalName: ok(),
    valueFrom: rec('OutputValueFrom'),
  },
  OutputValueFrom: {
    path: ok('container and script templates'),
    parameter: ok(),
    expression: ok(),
    supplied: ok('suspend templates'),
    default: ok(),
    jsonPath: ok("resource templates: kubectl's JSONPath over the object, as `kubectl get -o jsonpath` prints it"),
    jqFilter: ok('resource templates: jq over the object (each result on a line, strings raw), in a worker with a time and memory bound'),
    configMapKeyRef: no('output parameters come from the step; a ConfigMap value is read by an input or argument parameter'),
    event: no('only event bindings read it'),
  },
} satisfies Partial<Record<RecordName, Record<string, FieldRule>>>;

function refusedValueSources(why: string): Record<string, FieldRule> {
  const out: Record<string, FieldRule> = {};
  for (const k of ['configMapKeyRef', 'event', 'expression', 'jqFilter', 'jsonPath', 'parameter', 'path', 'supplied'])
    out[k] = no(`this source is not read here: ${why}`);
  return out;
}
