/**
 * One declaration per API record. A record's fields are written once, each with its TypeScript
 * value type, its CRD schema and its rule (supported, with a note users read, or refused with
 * the reason they get), and everything else is derived from that one object:
 *
 *   - the TypeScript type: `interface Template extends RecordOf<typeof TEMPLATE_RECORD.fields> {}`
 *     (required fields from `.required()`, optional otherwise);
 *   - the CRD schema: `TEMPLATE_RECORD.schema` (crd/*.ts and hack/gen-crds.ts render it);
 *   - the field catalogue: `TEMPLATE_RECORD.rules` (supported-fields.ts; the validator walks it);
 *   - the README's field table (supported-fields-doc.ts renders the catalogue).
 *
 * Why a phantom type on each field rather than a schema-to-type inference (as TypeBox does): the
 * records are mutually recursive (a step holds an inline Template) and several value types are
 * Kubernetes' own records, which we type but do not declare; an explicit `field<T>` keeps both
 * plain, and TypeScript resolves the recursion through the named interfaces.
 */
import { arr, mapOf, obj, openObject, type Extra, type Schema } from './crd/schema-builders.js';
import { ok, rec, type FieldRule, type FieldShape } from './field-rules.js';
import type { RecordName } from './supported-fields.js';

/** One field: its CRD schema, its rule, whether it is required, and (phantom) its value type. */
export interface FieldDecl<T = unknown, R extends boolean = boolean> {
  /** Undefined for a field the CRD does not type (see `untyped`). */
  readonly schema: Schema | undefined;
  readonly rule: FieldRule;
  readonly isRequired: R;
  /** The CRD lists it under `required` (false for a field only the validator requires). */
  readonly crdRequired: boolean;
  /** Never set: carries the value type to RecordOf. */
  readonly valueType?: T;
  /** The same field, required (the CRD lists it under `required`, the type loses its `?`). */
  required(): FieldDecl<T, true>;
  /**
   * The same field, required in the type and by the engine's validator, which names it when it
   * is missing; the CRD leaves it optional so that the validator's message is the one users get.
   */
  requiredByValidator(): FieldDecl<T, true>;
}

export type FieldsDecl = Record<string, FieldDecl>;

type ValueOf<F> = F extends FieldDecl<infer T, boolean> ? T : never;
type RequiredKeys<D> = { [K in keyof D]: D[K] extends FieldDecl<unknown, true> ? K : never }[keyof D];

/** The TypeScript type of a record's fields: required ones as declared, every other optional. */
export type RecordOf<D> = { [K in keyof D as K extends RequiredKeys<D> ? never : K]?: ValueOf<D[K]> } & {
  [K in keyof D as K extends RequiredKeys<D> ? K : never]-?: ValueOf<D[K]>;
};

function makeField<T, R extends boolean>(
  schema: Schema | undefined,
  rule: FieldRule,
  isRequired: R,
  crdRequired = isRequired as boolean,
): FieldDecl<T, R> {
  return {
    schema,
    rule,
    isRequired,
    crdRequired,
    required: () => makeField<T, true>(schema, rule, true),
    requiredByValidator: () => makeField<T, true>(schema, rule, true, false),
  };
}

/** A field of value type T with this CRD schema; supported without a note unless `rule` says. */
export function field<T>(schema: Schema, rule: FieldRule = ok()): FieldDecl<T, false> {
  return makeField<T, false>(schema, rule, false);
}

/**
 * A field the CRD does not type: its record keeps unknown fields (`open`), so the API server
 * stores it as written and the engine's validator checks it (the peer's long tail of WorkflowSpec
 * fields, typed here for the code and the catalogue).
 */
export function untyped<T>(rule: FieldRule = ok()): FieldDecl<T, false> {
  return makeField<T, false>(undefined, rule, false);
}

/** How the CRD types a field holding a declared record: its schema, or kept open (see `ref`). */
export type CrdForm = 'typed' | 'open' | 'untyped';

/**
 * A field holding a declared record (one, a list, a list of lists, a map by key): the rule walks
 * into it, and the CRD types it with the record's schema. `crd: 'open'` keeps it an opaque
 * object in the CRD (the big records whose checks the validator words better than a schema).
 */
export function ref<T>(
  record: RecordDecl,
  shape: FieldShape = 'one',
  note?: string,
  opts: { crd?: CrdForm; extra?: Extra } = {},
): FieldDecl<T, false> {
  if (opts.crd === 'untyped') return makeField<T, false>(undefined, rec(record.name, shape, note), false);
  const inner = opts.crd === 'open' ? openObject() : record.schema;
  const extra = opts.extra ?? {};
  const schema =
    shape === 'one'
      ? opts.crd === 'open'
        ? openObject(extra)
        : { ...inner, ...extra }
      : shape === 'list'
        ? arr(inner, extra)
        : shape === 'groups'
          ? arr(arr(inner), extra)
          : mapOf(inner, extra);
  return makeField<T, false>(schema, rec(record.name, shape, note), false);
}

const DECLARED = Symbol('record declaration');

/** A declared record: its name in the catalogue, its fields, and what is derived from them. */
export interface RecordDecl<D extends FieldsDecl = FieldsDecl> {
  readonly [DECLARED]: true;
  readonly name: RecordName;
  readonly fields: D;
  /** The catalogue's rules, by field. */
  readonly rules: Record<string, FieldRule>;
  /** The CRD schema: an object with these properties, required ones listed. */
  readonly schema: Schema;
}

/** Declares a record. `schema` adds to its CRD node (validations, `open`, a description). */
export function record<D extends FieldsDecl>(name: RecordName, fields: D, schema: Extra & { open?: boolean } = {}): RecordDecl<D> {
  const properties: Record<string, Schema> = {};
  const rules: Record<string, FieldRule> = {};
  const required: string[] = [];
  for (const [key, f] of Object.entries(fields)) {
    if (f.schema) properties[key] = f.schema;
    rules[key] = f.rule;
    if (f.crdRequired) required.push(key);
  }
  const extra = required.length > 0 ? { required, ...schema } : schema;
  return { [DECLARED]: true, name, fields, rules, schema: obj(properties, extra) };
}

/** Whether a module's export is a record declaration (supported-fields.ts collects them so). */
export function isRecordDecl(value: unknown): value is RecordDecl {
  return typeof value === 'object' && value !== null && (value as Partial<RecordDecl>)[DECLARED] === true;
}

/**
 * The same fields under another catalogue name, with some rules replaced: one record used in
 * several contexts with different rules, as a parameter is (an input's default is read, a call
 * argument's is refused). The type and the CRD schema are the base record's; `only` limits the
 * catalogue to those fields (a data template's source reads a store's location and nothing else).
 */
export function variant<D extends FieldsDecl>(
  base: RecordDecl<D>,
  name: RecordName,
  rules: Partial<Record<keyof D, FieldRule>>,
  only?: ReadonlyArray<keyof D & string>,
): RecordDecl<D> {
  const merged: Record<string, FieldRule> = { ...base.rules };
  for (const [key, rule] of Object.entries(rules) as Array<[string, FieldRule]>) {
    if (!Object.hasOwn(merged, key)) throw new Error(`variant ${name}: ${base.name} has no field ${key}`);
    merged[key] = rule;
  }
  // `only`: the context reads these fields alone; the others are unknown there (not refused).
  const kept = only ? Object.fromEntries(only.map((k) => [k, merged[k]!])) : merged;
  return { [DECLARED]: true, name, fields: base.fields, rules: kept, schema: base.schema };
}
