/**
 * A tiny declarative shape checker used to read `plugin.yaml` strictly.
 *
 * Why not a JSON schema with ajv: the errors users see must name the exact field path
 * (`spec.sidecar.container.ports[0].containerPortt: unknown field`), one line per problem, and
 * the shapes here are small enough that a 100-line walker is clearer than a schema plus an
 * error-message translator.
 */
import { isJsonObject, setOwn } from '../api/index.js';

export type Shape =
  | { t: 'string' }
  | { t: 'bool' }
  | { t: 'int'; min?: number; max?: number }
  /** A Kubernetes quantity: a string such as `500m` or `1Gi`, or a bare number. */
  | { t: 'quantity' }
  | { t: 'intOrString' }
  | { t: 'list'; of: Shape }
  | { t: 'map'; of: Shape }
  | { t: 'object'; fields: Record<string, Shape>; required?: readonly string[] }
  /** Any JSON value; used where the spec leaves a record open. */
  | { t: 'any' };

export const str: Shape = { t: 'string' };
export const bool: Shape = { t: 'bool' };
export const int = (min?: number, max?: number): Shape => ({ t: 'int', min, max });
export const quantity: Shape = { t: 'quantity' };
export const intOrString: Shape = { t: 'intOrString' };
export const any: Shape = { t: 'any' };
export const list = (of: Shape): Shape => ({ t: 'list', of });
export const map = (of: Shape): Shape => ({ t: 'map', of });
export const obj = (fields: Record<string, Shape>, required?: readonly string[]): Shape => ({ t: 'object', fields, required });

/** Kubernetes quantity syntax: signed decimal, optional exponent or binary/decimal suffix. */
export const QUANTITY_PATTERN = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+|Ki|Mi|Gi|Ti|Pi|Ei|m|k|M|G|T|P|E)?$/;

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/** Appends one message per problem to `errors`; `path` is the field path of `value`. */
export function checkShape(value: unknown, shape: Shape, path: string, errors: string[]): void {
  switch (shape.t) {
    case 'any':
      return;
    case 'string':
      if (typeof value !== 'string') errors.push(`${path}: must be a string, got ${describe(value)}`);
      return;
    case 'bool':
      if (typeof value !== 'boolean') errors.push(`${path}: must be true or false, got ${describe(value)}`);
      return;
    case 'int':
      if (typeof value !== 'number' || !Number.isInteger(value)) {
        errors.push(`${path}: must be an integer, got ${typeof value === 'number' ? value : describe(value)}`);
      } else if ((shape.min !== undefined && value < shape.min) || (shape.max !== undefined && value > shape.max)) {
        errors.push(`${path}: ${value} is out of range ${shape.min ?? '-inf'}..${shape.max ?? 'inf'}`);
      }
      return;
    case 'intOrString':
      if (typeof value !== 'string' && !(typeof value === 'number' && Number.isInteger(value))) {
        errors.push(`${path}: must be an integer or a string, got ${describe(value)}`);
      }
      return;
    case 'quantity':
      if (typeof value === 'number' ? !Number.isFinite(value) : typeof value !== 'string' || !QUANTITY_PATTERN.test(value)) {
        errors.push(`${path}: ${JSON.stringify(value)} is not a quantity (for example 100m, 0.5, 128Mi, 1Gi)`);
      }
      return;
    case 'list':
      if (!Array.isArray(value)) {
        errors.push(`${path}: must be a list, got ${describe(value)}`);
        return;
      }
      value.forEach((item, i) => checkShape(item, shape.of, `${path}[${i}]`, errors));
      return;
    case 'map':
      if (!isPlainObject(value)) {
        errors.push(`${path}: must be a map, got ${describe(value)}`);
        return;
      }
      for (const [k, v] of Object.entries(value)) checkShape(v, shape.of, childPath(path, k), errors);
      return;
    case 'object': {
      if (!isPlainObject(value)) {
        errors.push(`${path}: must be an object, got ${describe(value)}`);
        return;
      }
      for (const [k, v] of Object.entries(value)) {
        const field = shape.fields[k];
        const fieldPath = childPath(path, k);
        if (!field) errors.push(`${fieldPath}: unknown field`);
        // `null` means "not set" in Kubernetes objects (kubectl writes `creationTimestamp: null`).
        else if (v !== null) checkShape(v, field, fieldPath, errors);
      }
      for (const k of shape.required ?? []) {
        if (value[k] === undefined || value[k] === null) errors.push(`${childPath(path, k)}: required field is missing`);
      }
      return;
    }
  }
}

/** A copy of a JSON value without object fields that are `null` (unset), so later code never meets them. */
export function withoutNulls<T>(value: T): T {
  if (Array.isArray(value)) return value.map(withoutNulls) as T;
  if (!isPlainObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (v === null) continue;
    setOwn(out, k, withoutNulls(v));
  }
  return out as T;
}

/** A JSON object (not a list, not null): the shared test from src/api/user-json.ts. */
export const isPlainObject = isJsonObject;

/** `parent.name`, or `parent["odd/key"]` when the key is not a plain identifier (label keys). */
export function childPath(path: string, key: string): string {
  if (!/^[A-Za-z_$][A-Za-z0-9_$-]*$/.test(key)) return `${path}[${JSON.stringify(key)}]`;
  return path ? `${path}.${key}` : key;
}
