/**
 * Small builders for the OpenAPI v3 schemas of our CRDs. The CRD schemas are written once, in
 * TypeScript, with these helpers; hack/gen-crds.ts renders them to crds/*.yaml.
 *
 * Every builder returns a structural schema node (a `type` on every node, except the two kinds
 * Kubernetes lets go without one: int-or-string and preserved "anything" values), so the API
 * server accepts the CRD and can prune and validate with it.
 */

/** The subset of apiextensions.k8s.io/v1 JSONSchemaProps that we use. */
export interface Schema {
  type?: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';
  description?: string;
  format?: string;
  properties?: Record<string, Schema>;
  additionalProperties?: Schema;
  items?: Schema;
  required?: string[];
  enum?: Array<string | number | boolean>;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  minProperties?: number;
  maxProperties?: number;
  minItems?: number;
  maxItems?: number;
  /** Only in the int-or-string pattern: `[{type: integer}, {type: string}]`. */
  anyOf?: Array<{ type: 'integer' | 'string' }>;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  /** `atomic`: field management (managedFields, server-side apply) treats the object as one value. */
  'x-kubernetes-map-type'?: 'atomic' | 'granular';
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-validations'?: Array<{ rule: string; message?: string; reason?: string; fieldPath?: string }>;
}

/** Optional extras on any node. */
export type Extra = Omit<Schema, 'type' | 'properties' | 'items' | 'additionalProperties'>;

export function str(extra: Extra = {}): Schema {
  return { type: 'string', ...extra };
}

export function bool(extra: Extra = {}): Schema {
  return { type: 'boolean', ...extra };
}

export function int32(extra: Extra = {}): Schema {
  return { type: 'integer', format: 'int32', ...extra };
}

export function int64(extra: Extra = {}): Schema {
  return { type: 'integer', format: 'int64', ...extra };
}

export function num(extra: Extra = {}): Schema {
  return { type: 'number', ...extra };
}

/** One of the listed strings. */
export function oneOfStrings(values: readonly string[], extra: Extra = {}): Schema {
  return { type: 'string', enum: [...values], ...extra };
}

/**
 * An integer or a string (IntOrString in the spec), in the one form the API server accepts
 * everywhere, including below objects that preserve unknown fields.
 */
export function intOrString(extra: Extra = {}): Schema {
  return { anyOf: [{ type: 'integer' }, { type: 'string' }], 'x-kubernetes-int-or-string': true, ...extra };
}

/**
 * Any JSON value kept as is (AnyString, withItems elements). A node without a type must preserve
 * unknown fields to stay structural.
 */
export function anyValue(extra: Extra = {}): Schema {
  return { 'x-kubernetes-preserve-unknown-fields': true, ...extra };
}

/** An object whose content the API server keeps without looking inside (container, volume...). */
export function openObject(extra: Extra = {}): Schema {
  return { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, ...extra };
}

/** An empty-object shape (`supplied: {}`, `nodeAntiAffinity: {}`). */
export function emptyObject(extra: Extra = {}): Schema {
  return { type: 'object', ...extra };
}

/**
 * An object with the listed fields; other fields are pruned (and named by `kubectl`'s strict
 * field validation), unless `open` keeps them.
 */
export function obj(properties: Record<string, Schema>, extra: Extra & { open?: boolean } = {}): Schema {
  const { open, ...rest } = extra;
  const node: Schema = { type: 'object', ...rest, properties };
  if (open) node['x-kubernetes-preserve-unknown-fields'] = true;
  return node;
}

export function arr(items: Schema, extra: Extra = {}): Schema {
  return { type: 'array', items, ...extra };
}

/** A list of objects keyed (and made unique) by a field, e.g. templates by name. */
export function keyedList(items: Schema, key: string, extra: Extra = {}): Schema {
  return { type: 'array', items, 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': [key], ...extra };
}

/** A map of string keys to values of one schema. */
export function mapOf(values: Schema, extra: Extra = {}): Schema {
  return { type: 'object', additionalProperties: values, ...extra };
}

/** The spec's `map`: string to string. */
export function stringMap(extra: Extra = {}): Schema {
  return mapOf(str(), extra);
}

/** Names of templates, steps and tasks: letters, digits and '-', starting with a letter or digit. */
export const FIELD_NAME_PATTERN = '^[a-zA-Z0-9][-a-zA-Z0-9]*$';
export const FIELD_NAME_MAX_LENGTH = 128;

/** A template, step or task name. */
export function fieldName(description: string): Schema {
  return str({ description, pattern: FIELD_NAME_PATTERN, maxLength: FIELD_NAME_MAX_LENGTH });
}
