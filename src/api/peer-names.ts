/**
 * The peer's names of the spec's vendor-neutral fields. The spec names the stores and the metrics
 * sink neutrally (`vendorAObject`, `vendorB`, …); every workflow written for the peer says `s3`,
 * `azure`, `gcs`, `oss`, `artifactory`, `prometheus`. Both are accepted wherever the field is (the
 * spec's name stays canonical: what plugflow writes, and what the engine reads), and both in one
 * object is an error naming the two.
 *
 * canonicalNames() renames the peer's names to the spec's along the records of THE list of fields
 * (supported-fields.ts), so a label or parameter named `s3` is never touched; it copies only what
 * it renames. It runs where workflows enter: the controller's caches, the validator, lint.
 */
import { isJsonObject } from './user-json.js';
import { fieldRule, type FieldShape, type RecordName } from './supported-fields.js';

/** Spec name → the peer's name. */
export const PEER_NAMES: Readonly<Record<string, string>> = Object.freeze({
  vendorAObject: 's3',
  vendorB: 'azure',
  vendorCObject: 'gcs',
  vendorDObject: 'oss',
  vendorO: 'artifactory',
  vendorP: 'prometheus',
});

/** The peer's name → the spec's. */
export const SPEC_NAMES: Readonly<Record<string, string>> = Object.freeze(
  Object.assign(Object.create(null) as Record<string, string>, Object.fromEntries(Object.entries(PEER_NAMES).map(([s, p]) => [p, s]))),
);

/** The spec's name of `key` in `record` when `key` is the peer's name of one of its fields. */
export function specNameIn(record: RecordName, key: string): string | undefined {
  const name = SPEC_NAMES[key];
  return name !== undefined && fieldRule(record, name) ? name : undefined;
}

/** The message of an object that gives a field under both names. */
export function bothNamesDetail(specName: string): string {
  return `is given twice: ${PEER_NAMES[specName]} is the peer's name of ${specName}; keep one`;
}

/** `value` read as `record`, with the peer's names renamed (copies only what changes). */
export function canonicalNames<T>(value: T, record: RecordName): T {
  return renamed(value, record) as T;
}

function renamed(value: unknown, record: RecordName): unknown {
  if (!isJsonObject(value)) return value;
  let out: Record<string, unknown> | undefined;
  for (const key of Object.keys(value)) {
    const spec = specNameIn(record, key);
    // Left as written: both names (the validator refuses naming the two), and a field plugflow
    // refuses (its refusal names the field as the user wrote it).
    const name = spec !== undefined && !Object.hasOwn(value, spec) && fieldRule(record, spec)?.status === 'supported' ? spec : key;
    const rule = fieldRule(record, name);
    const child = rule?.status === 'supported' && rule.record ? shaped(value[key], rule.record, rule.shape ?? 'one') : value[key];
    if (name !== key || child !== value[key]) out ??= copyBefore(value, key);
    if (out) Object.defineProperty(out, name, { value: child, enumerable: true, writable: true, configurable: true });
  }
  return out ?? value;
}

/** A copy of `value`'s own keys that come before `stop`, in order (the rest is added by the walk). */
function copyBefore(value: Record<string, unknown>, stop: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(value)) {
    if (k === stop) break;
    Object.defineProperty(out, k, { value: value[k], enumerable: true, writable: true, configurable: true });
  }
  return out;
}

function shaped(value: unknown, record: RecordName, shape: FieldShape): unknown {
  if (shape === 'one') return renamed(value, record);
  if (shape === 'map') {
    if (!isJsonObject(value)) return value;
    let out: Record<string, unknown> | undefined;
    for (const [k, v] of Object.entries(value)) {
      const r = renamed(v, record);
      if (r !== v) out ??= { ...value };
      if (out) Object.defineProperty(out, k, { value: r, enumerable: true, writable: true, configurable: true });
    }
    return out ?? value;
  }
  if (!Array.isArray(value)) return value;
  let changed = false;
  const items = value.map((item) => {
    const r = shape === 'groups' ? shaped(item, record, 'list') : renamed(item, record);
    if (r !== item) changed = true;
    return r;
  });
  return changed ? items : value;
}
