/**
 * Validates a document against a CRD's openAPIV3Schema without an API server (ajv), reporting
 * problems as FieldErrors with the same field paths the API server uses
 * (`spec.templates[0].plugin`). Used by unit tests and by tools that want to check a file
 * before sending it.
 *
 * Not covered offline: the CEL rules (`x-kubernetes-validations`), which only the API server
 * evaluates; the engine's validator checks the same things with its own messages.
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { FieldError } from '../validation/field-error.js';
import type { CustomResourceDefinition } from './definitions.js';
import type { Schema } from './schema-builders.js';

function makeAjv(): Ajv {
  const ajv = new Ajv({ allErrors: true, strict: false, validateFormats: true });
  ajv.addFormat('int32', { type: 'number', validate: (n: number) => Number.isInteger(n) && n >= -(2 ** 31) && n < 2 ** 31 });
  ajv.addFormat('int64', { type: 'number', validate: (n: number) => Number.isInteger(n) });
  ajv.addFormat('byte', /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/);
  // int-or-string is checked by the anyOf that always comes with it.
  for (const keyword of [
    'x-kubernetes-preserve-unknown-fields',
    'x-kubernetes-list-type',
    'x-kubernetes-map-type',
    'x-kubernetes-validations',
    'x-kubernetes-int-or-string',
  ]) {
    ajv.addKeyword({ keyword });
  }
  ajv.addKeyword({
    keyword: 'x-kubernetes-list-map-keys',
    errors: false,
    validate: (keys: string[], data: unknown) => {
      if (!Array.isArray(data)) return true;
      const seen = new Set<string>();
      for (const item of data) {
        // An item that is not an object has no keys: its type error says what is wrong.
        if (typeof item !== 'object' || item === null || Array.isArray(item)) continue;
        const id = JSON.stringify(keys.map((k) => (item as Record<string, unknown>)[k]));
        if (seen.has(id)) return false;
        seen.add(id);
      }
      return true;
    },
  });
  return ajv;
}

/** `/spec/templates/0/name` → `spec.templates[0].name`. */
export function pointerToField(pointer: string): string {
  let out = '';
  for (const raw of pointer.split('/').slice(1)) {
    const part = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (/^\d+$/.test(part)) out += `[${part}]`;
    else if (/^[A-Za-z_$][\w$-]*$/.test(part)) out += out === '' ? part : `.${part}`;
    else out += `[${JSON.stringify(part)}]`;
  }
  return out === '' ? '<root>' : out;
}

function toFieldError(e: ErrorObject): FieldError {
  const at = pointerToField(e.instancePath);
  const params = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'required':
      return new FieldError(`${at === '<root>' ? '' : `${at}.`}${String(params.missingProperty)}`, 'is required');
    case 'enum':
      return new FieldError(at, `must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`);
    case 'maxProperties':
    case 'minProperties':
      return new FieldError(at, `must have ${e.keyword === 'maxProperties' ? 'at most' : 'at least'} ${String(params.limit)} key(s)`);
    case 'anyOf':
      return new FieldError(at, 'must be an integer or a string');
    case 'x-kubernetes-list-map-keys':
      return new FieldError(at, 'has duplicate names');
    default:
      return new FieldError(at, e.message ?? e.keyword);
  }
}

/** Validates documents against one schema: a CRD's, or one derived from it. */
export class SchemaValidator {
  private readonly validate: ValidateFunction;

  constructor(schema: Schema) {
    this.validate = makeAjv().compile(schema);
  }

  /** Problems found, empty when the document is valid. */
  check(doc: unknown): FieldError[] {
    if (this.validate(doc)) return [];
    // The branches of the int-or-string anyOf report their own type errors; the anyOf one says it all.
    const errors = (this.validate.errors ?? []).filter((e) => !/\/anyOf\/\d+\//.test(e.schemaPath));
    return errors.map(toFieldError);
  }
}

/** Validates documents of one CRD. */
export class OfflineValidator extends SchemaValidator {
  constructor(readonly crd: CustomResourceDefinition) {
    super(crd.spec.versions[0]!.schema.openAPIV3Schema);
  }
}
