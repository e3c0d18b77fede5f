import type { Node } from './ast.js';
import { compareCharged, keyString } from './builtins-support.js';
import type { EvalContext } from './context.js';
import { chargeKey, ELEMENT_BYTES, KEY_BYTES, MAP_BYTES } from './cost.js';
import { describeValue } from './format.js';
import { newMap, sortSteps, typeName, wrapInt, type Value } from './values.js';

/** A group's list as V8 grows it on the first push (room for 17 elements). */
const GROUP_BYTES = 192;

/**
 * The predicate builtins (`all`, `any`, `filter`, `map`, `reduce`, ...). The closure body is
 * compiled once; each iteration stores the element in its slot (`#`), the position in `#index`
 * and, for reduce, the accumulator in `#acc`, and charges the budget with the size of the body,
 * so nested loops over a large payload run out of steps instead of running for ever.
 */

export type Fn = (c: EvalContext) => Value;

export interface PredicateParts {
  name: string;
  node: Node;
  array: Fn;
  body: Fn | null;
  extra: Fn | null;
  elemSlot: number;
  indexSlot: number;
  accSlot: number;
  bodyCost: number;
}

function bool(c: EvalContext, name: string, v: Value): boolean {
  if (v === true || v === false) return v;
  return c.fail('type', `the predicate of ${name} must return a bool, got ${typeName(v)}`);
}

export function compilePredicateCall(p: PredicateParts): Fn {
  const { name, node, array, body, extra, elemSlot, indexSlot, accSlot, bodyCost } = p;
  const run = (c: EvalContext, xs: readonly Value[], i: number): Value => {
    c.charge(bodyCost);
    c.slots[elemSlot] = xs[i] ?? null;
    c.slots[indexSlot] = BigInt(i);
    return (body as Fn)(c);
  };
  const items = (c: EvalContext): readonly Value[] => {
    const xs = array(c);
    c.at = node;
    if (Array.isArray(xs)) return xs;
    return c.fail(
      'type',
      `${name}: the first argument must be an array, got ${typeName(xs)}${xs === null || xs === undefined ? ' (use ?? [] for an optional list)' : ''}`,
    );
  };
  switch (name) {
    case 'all':
    case 'none':
    case 'any':
    case 'one':
      return (c) => {
        const xs = items(c);
        let hits = 0;
        for (let i = 0; i < xs.length; i++) {
          const r = bool(c, name, run(c, xs, i));
          if (name === 'all' && !r) return false;
          if (name === 'none' && r) return false;
          if (name === 'any' && r) return true;
          if (r && ++hits > 1 && name === 'one') return false;
        }
        return name === 'one' ? hits === 1 : name !== 'any';
      };
    case 'filter':
      return (c) => {
        const xs = items(c);
        const out: Value[] = [];
        for (let i = 0; i < xs.length; i++) if (bool(c, name, run(c, xs, i))) out.push(xs[i]);
        c.alloc(out.length * ELEMENT_BYTES);
        return out;
      };
    case 'map':
      return (c) => {
        const xs = items(c);
        c.alloc(xs.length * ELEMENT_BYTES);
        const out: Value[] = new Array<Value>(xs.length);
        for (let i = 0; i < xs.length; i++) out[i] = run(c, xs, i);
        return out;
      };
    case 'count':
      return (c) => {
        const xs = items(c);
        let n = 0n;
        for (let i = 0; i < xs.length; i++) {
          const r = body ? run(c, xs, i) : xs[i];
          if (bool(c, name, r)) n++;
        }
        return n;
      };
    case 'sum':
      return (c) => {
        const xs = items(c);
        let int = 0n;
        let float = 0;
        let isFloat = false;
        c.charge(xs.length);
        for (let i = 0; i < xs.length; i++) {
          const r = body ? run(c, xs, i) : xs[i];
          if (typeof r === 'bigint') int = wrapInt(int + r);
          else if (typeof r === 'number') {
            float += r;
            isFloat = true;
          } else return c.fail('type', `sum: cannot add ${typeName(r)}`);
        }
        return isFloat ? float + Number(int) : int;
      };
    case 'find':
    case 'findIndex':
    case 'findLast':
    case 'findLastIndex':
      return (c) => {
        const xs = items(c);
        const last = name.startsWith('findLast');
        for (let k = 0; k < xs.length; k++) {
          const i = last ? xs.length - 1 - k : k;
          if (bool(c, name, run(c, xs, i))) return name.endsWith('Index') ? BigInt(i) : xs[i];
        }
        return name.endsWith('Index') ? -1n : null;
      };
    case 'groupBy':
      return (c) => {
        const xs = items(c);
        const out = newMap();
        c.alloc(MAP_BYTES + xs.length * ELEMENT_BYTES);
        for (let i = 0; i < xs.length; i++) {
          const key = keyString(c, 'groupBy', run(c, xs, i));
          c.charge(2); // a hash-table insert per element
          if (!Object.hasOwn(out, key)) {
            chargeKey(c, key);
            c.charge(4); // a new key and its list
            c.alloc(KEY_BYTES + GROUP_BYTES);
          }
          const group = (Object.hasOwn(out, key) ? out[key] : (out[key] = [])) as Value[];
          group.push(xs[i]);
        }
        return out;
      };
    case 'sortBy':
      return (c) => {
        const xs = items(c);
        c.alloc(xs.length * ELEMENT_BYTES * 3);
        const keys: Value[] = [];
        for (let i = 0; i < xs.length; i++) keys.push(run(c, xs, i));
        const dir = extra ? extra(c) : 'asc';
        if (dir !== 'asc' && dir !== 'desc')
          return c.fail('call', `sortBy: invalid order (${describeValue(dir)}), expected "asc" or "desc"`);
        const allNum = keys.every((k) => typeof k === 'number' || typeof k === 'bigint');
        const allStr = keys.every((k) => typeof k === 'string');
        if (!allNum && !allStr) return c.fail('type', 'sortBy: the predicate must give only numbers or only strings');
        c.charge(sortSteps(xs.length));
        const sign = dir === 'desc' ? -1 : 1;
        const sortedIdx = keys.map((_k, i) => i).sort((a, b) => compareKeys(c, keys[a], keys[b]) * sign);
        return sortedIdx.map((i) => xs[i]);
      };
    case 'reduce':
      return (c) => {
        const xs = items(c);
        let start = 0;
        if (extra) c.slots[accSlot] = extra(c);
        else {
          if (xs.length === 0) return c.fail('call', 'reduce: the array is empty and no initial value was given');
          c.slots[accSlot] = xs[0];
          start = 1;
        }
        for (let i = start; i < xs.length; i++) c.slots[accSlot] = run(c, xs, i);
        return c.slots[accSlot];
      };
    default:
      throw new Error(`unknown predicate builtin ${name}`);
  }
}

function compareKeys(c: EvalContext, a: Value, b: Value): number {
  if (typeof a === 'string' && typeof b === 'string') return compareCharged(c, a, b);
  return (a as number) < (b as number) ? -1 : (a as number) > (b as number) ? 1 : 0;
}
