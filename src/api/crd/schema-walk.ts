/**
 * Offline checks of our CRD schemas, so mistakes show up in unit tests rather than only against a
 * real API server:
 *
 * - `structuralProblems`: the rules that make the API server accept a schema as structural
 *   (every node typed unless int-or-string or preserved, arrays with items, list-map keys
 *   required, no properties next to additionalProperties).
 * - `prunedFields`: the fields of a document the API server would silently drop, i.e. fields
 *   the schema neither lists nor preserves — a document must round-trip unchanged.
 */
import type { Schema } from './schema-builders.js';

export function structuralProblems(schema: Schema, path = '<root>'): string[] {
  const out: string[] = [];
  const preserve = schema['x-kubernetes-preserve-unknown-fields'] === true;
  const intOrString = schema['x-kubernetes-int-or-string'] === true;
  if (intOrString && schema.type !== undefined) out.push(`${path}: int-or-string must not have a type`);
  if (schema.anyOf && !(intOrString && JSON.stringify(schema.anyOf) === '[{"type":"integer"},{"type":"string"}]')) {
    out.push(`${path}: anyOf is only allowed as the int-or-string pattern`);
  }
  if (intOrString && !schema.anyOf) out.push(`${path}: int-or-string without its anyOf pattern`);
  if (schema.type === undefined && !intOrString && !preserve) out.push(`${path}: no type`);
  if (schema.type === 'array' && !schema.items) out.push(`${path}: array without items`);
  if (schema.type !== 'array' && schema.items) out.push(`${path}: items on a ${schema.type ?? 'untyped'} node`);
  if (schema.type !== 'object' && (schema.properties || schema.additionalProperties)) {
    out.push(`${path}: properties on a ${schema.type ?? 'untyped'} node`);
  }
  if (schema.properties && schema.additionalProperties) out.push(`${path}: both properties and additionalProperties`);
  for (const r of schema.required ?? []) {
    if (!schema.properties?.[r]) out.push(`${path}: required field ${r} is not declared`);
  }
  for (const v of schema.enum ?? []) {
    const t = typeof v === 'number' ? (Number.isInteger(v) ? ['integer', 'number'] : ['number']) : [typeof v];
    if (!t.includes(schema.type ?? '')) out.push(`${path}: enum value ${JSON.stringify(v)} does not match type ${schema.type}`);
  }
  if (schema['x-kubernetes-list-type'] === 'map') {
    const keys = schema['x-kubernetes-list-map-keys'] ?? [];
    if (keys.length === 0) out.push(`${path}: list-type map without list-map-keys`);
    for (const k of keys) {
      if (!schema.items?.required?.includes(k)) out.push(`${path}: list-map key ${k} is not required`);
      const keyType = schema.items?.properties?.[k]?.type;
      if (keyType !== 'string' && keyType !== 'integer') out.push(`${path}: list-map key ${k} is not a scalar`);
    }
  }
  for (const [name, child] of Object.entries(schema.properties ?? {})) out.push(...structuralProblems(child, `${path}.${name}`));
  if (schema.items) out.push(...structuralProblems(schema.items, `${path}[]`));
  if (schema.additionalProperties) out.push(...structuralProblems(schema.additionalProperties, `${path}{}`));
  return out;
}

/** Paths (in `a.b[0].c` form) of the fields of `doc` that `schema` would prune. */
export function prunedFields(schema: Schema, doc: unknown, path = ''): string[] {
  if (doc === null || typeof doc !== 'object') return [];
  if (Array.isArray(doc)) {
    if (!schema.items) return [];
    return doc.flatMap((item, i) => prunedFields(schema.items!, item, `${path}[${i}]`));
  }
  const out: string[] = [];
  const preserve = schema['x-kubernetes-preserve-unknown-fields'] === true;
  for (const [key, value] of Object.entries(doc as Record<string, unknown>)) {
    // The API server handles the root's metadata itself (it is never pruned by the CRD schema).
    if (path === '' && key === 'metadata') continue;
    const childPath = path === '' ? key : `${path}.${key}`;
    const declared = schema.properties?.[key] ?? schema.additionalProperties;
    if (declared) out.push(...prunedFields(declared, value, childPath));
    else if (!preserve) out.push(childPath);
  }
  return out;
}
