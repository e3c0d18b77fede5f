/**
 * User JSON: any JSON or YAML value plugflow did not write itself — workflow bodies, podSpecPatch,
 * parameters, event payloads, binding parameters, plugin replies. One module so that every place
 * that parses, copies, merges or walks such a value follows the same rule, and a new one can
 * reuse it instead of writing its own loop.
 *
 * Why this design (issue 10, prototype pollution):
 * - Only two operations reach a prototype. (a) Reading an inherited property while walking:
 *   `target[key]` with key `__proto__` yields Object.prototype, `constructor` yields Object,
 *   whose `prototype` is Object.prototype — a merge that descends there writes into every object
 *   of the process. (b) Assigning with set semantics (`obj[k] = v`, Object.assign) when k is
 *   `__proto__`, which replaces the target's prototype, so it inherits fields nobody wrote.
 *   JSON.parse, the yaml library, spread, structuredClone and Object.fromEntries create own data
 *   properties and are inert by themselves.
 * - So, three rules:
 *   1. `__proto__` is refused at every entry point (parseUserJson, checkUserValue), with an error
 *      that names where it is. No record plugflow reads has such a field, a document carrying one
 *      is hostile or broken, and refusing keeps what is stored equal to what its author sees.
 *   2. `constructor` and `prototype` stay ordinary data: they are legal label keys and JSON field
 *      names, and as own properties they are inert. They are dangerous only when followed as
 *      inherited properties, which rule 3 excludes.
 *   3. Walkers read own properties only (getOwn) and write with defineProperty (setOwn), so even
 *      an own `__proto__` that reached them some other way is copied as data, never followed.
 * - Null-prototype objects were not chosen for the data itself: the Kubernetes client, test
 *   matchers, string conversion and code calling `obj.hasOwnProperty` all assume plain objects,
 *   and the rules above make the prototype unreachable without changing the objects' shape.
 */

/** The one key refused in user JSON (see rule 1). */
export const PROTO_KEY = '__proto__';

/** What is wrong with a `__proto__` key, after its path (`spec.x.__proto__ is a key named …`). */
export const PROTO_KEY_DETAIL =
  'is a key named "__proto__", which plugflow refuses in user JSON and YAML (it could rewrite object prototypes): rename or remove it';

/** A `__proto__` key in user JSON; the message names the document and the path. */
export class UnsafeJsonError extends Error {
  constructor(
    readonly where: string,
    readonly path: string,
  ) {
    super(`${where}: ${path} ${PROTO_KEY_DETAIL}`);
    this.name = 'UnsafeJsonError';
  }
}

/** A JSON object (not a list, not null). */
export function isJsonObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** `o[key]` when it is an own property, else undefined: nothing is ever read from a prototype. */
export function getOwn(o: object, key: string): unknown {
  return Object.hasOwn(o, key) ? (o as Record<string, unknown>)[key] : undefined;
}

/** Sets an own data property, whatever `key` is (`__proto__` included): never a prototype change. */
export function setOwn(o: object, key: string, value: unknown): void {
  Object.defineProperty(o, key, { value, writable: true, enumerable: true, configurable: true });
}

/** `a.b`, `a["x/y"]`, `a[3]`: the path notation of messages (as FieldPath writes it). */
function childPath(path: string, key: string): string {
  if (/^[A-Za-z_$][A-Za-z0-9_$-]*$/.test(key)) return path === '' ? key : `${path}.${key}`;
  return `${path}[${JSON.stringify(key)}]`;
}

/**
 * The path of the first own `__proto__` key inside `value` (`""` for the root object itself
 * never occurs: a root has no key), or undefined. Iterative, so any depth is safe.
 */
export function protoKeyPath(value: unknown, root = ''): string | undefined {
  // Iterative (no recursion on user depth) and lazy about paths: a frame records its parent and
  // its key, and a path string is built only for the one hit, so a 2,000,000-element list costs
  // one small frame per element rather than one growing string per element.
  type Frame = { v: unknown; parent: Frame | undefined; key: string | number };
  const pathOf = (f: Frame | undefined, last?: string): string => {
    const parts: Array<string | number> = last === undefined ? [] : [last];
    for (let at = f; at?.parent !== undefined; at = at.parent) parts.push(at.key);
    let path = root;
    for (let i = parts.length - 1; i >= 0; i--) {
      const k = parts[i]!;
      path = typeof k === 'number' ? `${path}[${k}]` : childPath(path, k);
    }
    return path;
  };
  const stack: Frame[] = [{ v: value, parent: undefined, key: '' }];
  while (stack.length > 0) {
    const frame = stack.pop()!;
    const v = frame.v;
    if (typeof v !== 'object' || v === null) continue;
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) {
        const item: unknown = v[i];
        if (typeof item === 'object' && item !== null) stack.push({ v: item, parent: frame, key: i });
      }
      continue;
    }
    if (Object.hasOwn(v, PROTO_KEY)) return pathOf(frame, PROTO_KEY);
    const keys = Object.keys(v);
    for (let i = keys.length - 1; i >= 0; i--) {
      const item = (v as Record<string, unknown>)[keys[i]!];
      if (typeof item === 'object' && item !== null) stack.push({ v: item, parent: frame, key: keys[i]! });
    }
  }
  return undefined;
}

/**
 * Throws UnsafeJsonError when `value` (already parsed, e.g. by the yaml library or the
 * Kubernetes client) has a `__proto__` key anywhere; `where` names the document in the message.
 */
export function checkUserValue<T>(value: T, where: string, root = ''): T {
  const path = protoKeyPath(value, root);
  if (path !== undefined) throw new UnsafeJsonError(where, path);
  return value;
}

/**
 * JSON.parse for user text, refusing `__proto__` keys (UnsafeJsonError). Syntax errors are
 * JSON.parse's SyntaxError. Text that cannot spell the key (no `__proto__`, no `\u` escape) is
 * not walked, so the common case costs one substring search.
 */
export function parseUserJson(text: string, where: string): unknown {
  const value: unknown = JSON.parse(text);
  if (text.includes(PROTO_KEY) || text.includes('\\u')) checkUserValue(value, where);
  return value;
}

/**
 * A deep copy of JSON data (plain or null-prototype objects, lists, scalars) into plain objects, made of own enumerable properties
 * only and written with setOwn; anything else (functions, class instances) is copied as is.
 * Use it instead of structuredClone or spreading when the copy will be merged into or walked.
 */
export function copyUserJson<T>(value: T): T {
  if (Array.isArray(value)) return value.map((v) => copyUserJson(v)) as T;
  if (!isJsonObject(value)) return value;
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) setOwn(out, key, copyUserJson(value[key]));
  return out as T;
}

/** Deep equality of JSON values (undefined object members count as absent). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x, i) => jsonEqual(x, b[i]));
  }
  if (isJsonObject(a)) {
    if (!isJsonObject(b)) return false;
    const ka = Object.keys(a).filter((k) => a[k] !== undefined);
    const kb = Object.keys(b).filter((k) => b[k] !== undefined);
    if (ka.length !== kb.length) return false;
    return ka.every((k) => jsonEqual(a[k], getOwn(b, k)));
  }
  return false;
}
