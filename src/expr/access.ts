import type { Node } from './ast.js';
import { SHORT, type EvalContext } from './context.js';
import { charSteps, ELEMENT_BYTES } from './cost.js';
import { describeValue, previewValue } from './format.js';
import { typeName, type Value, type ValueMap } from './values.js';

/**
 * Member, index and slice access: `a.b`, `a["b"]`, `a[0]`, `a[1:3]`, `a?.b`. A missing map key
 * is nil; reading anything of nil is an error (unless through `?.`); an index past the end of a
 * list is an error; only own properties of plain maps exist.
 */

type MemberNode = Extract<Node, { k: 'member' }>;
type SliceNode = Extract<Node, { k: 'slice' }>;

const short = SHORT as unknown as Value;

function keyText(node: MemberNode, key: Value): string {
  if (node.prop.k === 'str' && node.prop.p > node.obj.e) return JSON.stringify(node.prop.v);
  // A literal key is the expression's own text; a computed one may come from the event: type and size only.
  if (node.prop.k === 'int' || node.prop.k === 'float' || node.prop.k === 'str' || node.prop.k === 'bool') return previewValue(key);
  return `a key (${describeValue(key)})`;
}

export function nilMember(c: EvalContext, node: MemberNode, key: Value): never {
  return c.fail(
    'nil-member',
    `cannot read ${keyText(node, key)} of nil: ${c.text(node.obj)} is nil (use ?. or check it != nil first)`,
    node,
  );
}

/** The general case; the compiler inlines the common "plain map, string key" path before it. */
export function readMember(c: EvalContext, node: MemberNode, obj: Value, key: Value, optional: boolean): Value {
  if ((obj as unknown) === SHORT) return short;
  if (obj === null || obj === undefined) return optional ? short : nilMember(c, node, key);
  if (Array.isArray(obj)) {
    if (typeof key === 'bigint' || typeof key === 'number') return readIndex(c, node, obj as Value[], Number(key));
    return c.fail('type', `cannot read ${keyText(node, key)} of an array (${c.text(node.obj)}); arrays are indexed by number`, node);
  }
  if (typeof obj === 'object') {
    if (typeof key === 'string')
      return Object.hasOwn(obj, key) && typeof (obj as ValueMap)[key] !== 'function' ? ((obj as ValueMap)[key] ?? null) : null;
    return c.fail('type', `map keys are strings, got ${describeValue(key)} to read ${c.text(node.obj)}`, node);
  }
  if (typeof obj === 'string' && (typeof key === 'bigint' || typeof key === 'number')) {
    // Go indexes strings by byte: the result is the byte value, as in expr-lang.
    c.charge(charSteps(obj.length) * 2);
    const bytes = Buffer.from(obj, 'utf8');
    let i = Math.trunc(Number(key));
    if (i < 0) i += bytes.length;
    if (i < 0 || i >= bytes.length)
      return c.fail('index', `index out of range: ${Number(key)} (string length is ${bytes.length} bytes)`, node);
    return BigInt(bytes[i]);
  }
  return c.fail('type', `cannot read ${keyText(node, key)} of ${typeName(obj)} ${c.text(node.obj)}`, node);
}

function readIndex(c: EvalContext, node: MemberNode, list: readonly Value[], raw: number): Value {
  let i = Math.trunc(raw);
  if (i < 0) i += list.length;
  if (i < 0 || i >= list.length || Number.isNaN(i)) {
    return c.fail('index', `index out of range: ${raw} (array length is ${list.length}) in ${c.text(node)}`, node);
  }
  return list[i] ?? null;
}

export function readSlice(c: EvalContext, node: SliceNode, obj: Value, from: Value, to: Value): Value {
  if ((obj as unknown) === SHORT) return short;
  const isList = Array.isArray(obj);
  if (!isList && typeof obj !== 'string') {
    return c.fail(obj === null || obj === undefined ? 'nil-member' : 'type', `cannot slice ${typeName(obj)} ${c.text(node.obj)}`, node);
  }
  if (!isList) c.charge(charSteps((obj as string).length) * 2); // encoded to UTF-8 to cut at bytes
  const bytes = isList ? null : Buffer.from(obj as string, 'utf8');
  const len = isList ? (obj as Value[]).length : (bytes as Buffer).length;
  const bound = (v: Value, dflt: number): number => {
    if (v === null || v === undefined) return dflt;
    if (typeof v !== 'bigint' && typeof v !== 'number') return c.fail('type', `slice bounds must be numbers, got ${typeName(v)}`, node);
    let n = Math.trunc(Number(v));
    if (n < 0) n += len;
    return Math.max(0, Math.min(n, len));
  };
  const a = bound(from, 0);
  const b = Math.max(a, bound(to, len));
  if (isList) {
    c.charge(b - a);
    c.alloc((b - a) * ELEMENT_BYTES);
    return (obj as Value[]).slice(a, b);
  }
  return (bytes as Buffer).subarray(a, b).toString('utf8');
}
