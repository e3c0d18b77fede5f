/**
 * The structural check of a workflow sent to `POST /api/v1/workflows/{namespace}`, run before
 * any code that reads it: the Workflow CRD's schema (src/api/crd, the same one the API server
 * enforces), with the metadata fields the server reads typed, inline templates checked against
 * the Template record (the CRD keeps `inline` opaque), and a bound on nesting depth. Only a
 * document that passes is handed to the engine's validator, which assumes the shape and checks
 * meaning. Total: any JSON value gets a list of problems (empty when the shape is right), each
 * naming its field, and nothing is thrown.
 */
import { isJsonObject as isObject, PROTO_KEY_DETAIL, protoKeyPath } from '../user-json.js';
import { FieldError } from '../validation/field-error.js';
import { crdDefinitions } from './definitions.js';
import { SchemaValidator } from './offline-validator.js';
import { obj, str, stringMap, type Schema } from './schema-builders.js';

/** Deepest nesting of arrays and objects accepted in a workflow (real ones stay far below). */
export const MAX_WORKFLOW_DEPTH = 100;

/** The ObjectMeta fields the server and the engine read; the API server checks the rest. */
const objectMetaSchema: Schema = obj(
  {
    name: str(),
    generateName: str(),
    namespace: str(),
    labels: stringMap(),
    annotations: stringMap(),
  },
  { open: true },
);

let validator: SchemaValidator | undefined;

/**
 * The Workflow CRD's schema with typed metadata, compiled once (about half a second: the server
 * calls this at start-up, so no request waits for it).
 */
export function workflowShapeValidator(): SchemaValidator {
  if (validator) return validator;
  const crd = crdDefinitions().find((c) => c.spec.names.kind === 'Workflow')!;
  const root = crd.spec.versions[0]!.schema.openAPIV3Schema;
  // `status` is dropped from what is sent (the controller owns it), so it is not checked.
  const { status: _status, ...properties } = root.properties ?? {};
  void _status;
  validator = new SchemaValidator({ ...root, properties: { ...properties, metadata: objectMetaSchema } });
  return validator;
}

/** Where an inline template is checked: as the only template of an otherwise empty workflow. */
const WRAPPED = 'spec.templates[0]';

/**
 * Shape problems of `doc` as a Workflow (fields relative to the workflow: `spec.templates[0]`),
 * empty when it may be given to the engine's validator.
 */
export function workflowShapeProblems(doc: unknown): FieldError[] {
  const deep = tooDeep(doc, MAX_WORKFLOW_DEPTH);
  if (deep !== undefined) return [new FieldError(deep, `nests arrays and objects more than ${MAX_WORKFLOW_DEPTH} levels deep`)];
  const proto = protoKeyPath(doc);
  if (proto !== undefined) return [new FieldError(proto, PROTO_KEY_DETAIL)];
  const v = workflowShapeValidator();
  const problems = v.check(doc);
  if (problems.length > 0) return problems;
  // The CRD keeps inline templates opaque; the engine reads them as templates. Each is checked
  // as a template of its own (an inline template needs no name), then its own calls in turn.
  const spec = (doc as { spec: { templates?: unknown[] } }).spec;
  const pending: [unknown, string][] = (spec.templates ?? []).map((t, i) => [t, `spec.templates[${i}]`]);
  while (pending.length > 0) {
    const [t, at] = pending.pop()!;
    if (!isObject(t)) continue;
    const calls: [unknown, string][] = [];
    if (Array.isArray(t.steps)) {
      t.steps.forEach((group, g) => {
        if (Array.isArray(group)) group.forEach((step, s) => calls.push([step, `${at}.steps[${g}][${s}]`]));
      });
    }
    const tasks = isObject(t.dag) ? t.dag.tasks : undefined;
    if (Array.isArray(tasks)) tasks.forEach((task, k) => calls.push([task, `${at}.dag.tasks[${k}]`]));
    for (const [call, where] of calls) {
      if (!isObject(call) || call.inline === undefined) continue;
      const inline = call.inline;
      const named =
        isObject(inline) && (inline.name === undefined || typeof inline.name === 'string') ? { ...inline, name: 'inline' } : inline;
      const found = v.check({ spec: { templates: [named] } });
      for (const p of found) {
        const rest = p.field.startsWith(WRAPPED) ? p.field.slice(WRAPPED.length) : `: ${p.field}`;
        problems.push(new FieldError(`${where}.inline${rest}`, p.detail));
      }
      if (found.length === 0) pending.push([inline, `${where}.inline`]);
    }
  }
  return problems;
}

interface Visit {
  value: unknown;
  depth: number;
  parent?: Visit;
  key?: string | number;
}

/** The field path of the first value nested deeper than `max` levels, if any (no recursion). */
function tooDeep(doc: unknown, max: number): string | undefined {
  const stack: Visit[] = [{ value: doc, depth: 0 }];
  while (stack.length > 0) {
    const visit = stack.pop()!;
    const v = visit.value;
    if (typeof v !== 'object' || v === null) continue;
    if (visit.depth >= max) return pathOf(visit);
    if (Array.isArray(v)) v.forEach((x, i) => stack.push({ value: x, depth: visit.depth + 1, parent: visit, key: i }));
    else for (const [k, x] of Object.entries(v)) stack.push({ value: x, depth: visit.depth + 1, parent: visit, key: k });
  }
  return undefined;
}

/** `spec.templates[0].steps[1]`: the path of a visited value, built only when it is reported. */
function pathOf(visit: Visit): string {
  const keys: (string | number)[] = [];
  for (let at: Visit | undefined = visit; at?.parent; at = at.parent) keys.push(at.key!);
  let out = '';
  for (const k of keys.reverse()) {
    if (typeof k === 'number') out += `[${k}]`;
    else if (/^[A-Za-z_$][\w$-]*$/.test(k)) out += out === '' ? k : `.${k}`;
    else out += `[${JSON.stringify(k)}]`;
  }
  return out === '' ? '<root>' : out;
}
