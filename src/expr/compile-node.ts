import { readMember, readSlice } from './access.js';
import { countNodes, type Node } from './ast.js';
import { BUILTINS, UNSUPPORTED_BUILTINS } from './builtins.js';
import { nodeError, SHORT, sourceText, type EvalContext, type ProgramInfo } from './context.js';
import { callBuiltin, chargeKey } from './cost.js';
import type { ExprErrorCode } from './errors.js';
import type { ExprLimits } from './limits.js';
import { negate } from './ops.js';
import { compileBinary } from './compile-binary.js';
import { PREDICATE_BUILTINS } from './operators.js';
import { compilePredicateCall, type Fn } from './predicates.js';
import { SPRIG } from './sprig.js';
import { newMap, typeName, type Value } from './values.js';

/**
 * Turns the AST into a tree of JS closures, once per expression. Evaluating is then a few
 * direct calls per node with no interpretation overhead, which is what keeps a compiled
 * selector within a small factor of a hand-written predicate. Names of `let` variables and
 * predicate pointers are resolved here to slots, and everything that can be checked without
 * the environment (function names and arities, regex literals, `#` scope) fails here.
 */

export type { Fn };

interface Scope {
  vars: ReadonlyMap<string, number>;
  pointer: { elem: number; index: number; acc: number } | null;
}

const short = SHORT as unknown as Value;
const hasOwn = Object.hasOwn;

export class NodeCompiler {
  slotCount = 0;

  constructor(
    private readonly info: ProgramInfo,
    private readonly limits: ExprLimits,
  ) {}

  compileRoot(node: Node): Fn {
    return this.compile(node, { vars: new Map(), pointer: null }, false);
  }

  private fail(code: ExprErrorCode, reason: string, node: Node): never {
    throw nodeError(this.info, code, reason, node);
  }

  private slot(): number {
    return this.slotCount++;
  }

  /** The value of a node that needs no environment (literals and lists/maps of literals). */
  private constant(node: Node): { v: Value } | null {
    switch (node.k) {
      case 'nil':
        return { v: null };
      case 'bool':
      case 'int':
      case 'float':
      case 'str':
        return { v: node.v };
      case 'unary': {
        const inner = node.op === '-' && (node.arg.k === 'int' || node.arg.k === 'float') ? node.arg : null;
        if (!inner) return null;
        return { v: inner.k === 'int' ? BigInt.asIntN(64, -inner.v) : -inner.v };
      }
      case 'array': {
        const items: Value[] = [];
        for (const item of node.items) {
          const c = this.constant(item);
          if (!c) return null;
          items.push(c.v);
        }
        return { v: Object.freeze(items) };
      }
      case 'map': {
        const out = newMap();
        for (const { key, value } of node.pairs) {
          const v = this.constant(value);
          if (key.k !== 'str' || !v) return null;
          out[key.v] = v.v;
        }
        return { v: Object.freeze(out) };
      }
      default:
        return null;
    }
  }

  compile(node: Node, scope: Scope, inChain: boolean): Fn {
    const konst = this.constant(node);
    if (konst) {
      const v = konst.v;
      return () => v;
    }
    switch (node.k) {
      case 'ident':
        return this.ident(node, scope);
      case 'env':
        return (c) => c.env;
      case 'pointer': {
        const p = scope.pointer;
        if (!p) return this.fail('syntax', 'cannot use # outside a predicate', node);
        if (node.name === 'acc' && p.acc < 0) return this.fail('syntax', '#acc is only available in the predicate of reduce', node);
        const slot = node.name === '' ? p.elem : node.name === 'index' ? p.index : p.acc;
        return (c) => c.slots[slot];
      }
      case 'chain': {
        const inner = this.compile(node.node, scope, true);
        return (c) => {
          const v = inner(c);
          return v === short ? null : v;
        };
      }
      case 'member':
        return this.member(node, scope, inChain);
      case 'slice': {
        const obj = this.compile(node.obj, scope, inChain);
        const from = node.from ? this.compile(node.from, scope, false) : null;
        const to = node.to ? this.compile(node.to, scope, false) : null;
        return (c) => {
          const o = obj(c);
          return readSlice(c, node, o, from ? from(c) : null, to ? to(c) : null);
        };
      }
      case 'unary':
        return this.unary(node, scope);
      case 'binary':
        return compileBinary(node, (child) => this.compile(child, scope, false), this.info, this.limits);
      case 'cond': {
        const cond = this.compile(node.cond, scope, false);
        const then = node.then ? this.compile(node.then, scope, false) : null;
        const other = this.compile(node.else, scope, false);
        return (c) => {
          const v = cond(c);
          if (v === true) return then ? then(c) : true;
          if (v === false) return other(c);
          return c.fail(
            'type',
            `the condition of ?: must be a bool, got ${typeName(v)} (${sourceText(this.info.source, node.cond)})`,
            node,
          );
        };
      }
      case 'array': {
        const items = node.items.map((n) => this.compile(n, scope, false));
        return (c) => {
          const out = new Array<Value>(items.length);
          for (let i = 0; i < items.length; i++) out[i] = items[i](c);
          return out;
        };
      }
      case 'map':
        return this.map(node, scope);
      case 'call':
        return this.call(node, scope);
      case 'let': {
        const value = this.compile(node.value, scope, false);
        const slot = this.slot();
        const vars = new Map(scope.vars).set(node.name, slot);
        const body = this.compile(node.body, { vars, pointer: scope.pointer }, false);
        return (c) => {
          c.slots[slot] = value(c);
          return body(c);
        };
      }
      case 'predicate':
        return this.fail('syntax', 'a predicate is only allowed as an argument of a predicate function', node);
      default:
        return this.fail('syntax', `unsupported expression`, node);
    }
  }

  private ident(node: Extract<Node, { k: 'ident' }>, scope: Scope): Fn {
    const slot = scope.vars.get(node.name);
    if (slot !== undefined) return (c) => c.slots[slot];
    const name = node.name;
    return (c) => envValue(c, name, node);
  }

  private member(node: Extract<Node, { k: 'member' }>, scope: Scope, inChain: boolean): Fn {
    const path = this.path(node, scope, inChain);
    if (path) return path;
    const obj = this.compile(node.obj, scope, inChain);
    const optional = node.optional;
    const prop = this.compile(node.prop, scope, false);
    return (c) => {
      const o = obj(c);
      if (o === short) return short;
      return readMember(c, node, o, prop(c), optional);
    };
  }

  /**
   * `a.b.c` / `a["b"]["c"]` with constant keys: one closure walks all the steps, so a typical
   * selector operand costs one call instead of one per member. Reading an own property of a
   * non-array object never looks at its prototype; everything else takes the general path.
   */
  private path(node: Extract<Node, { k: 'member' }>, scope: Scope, inChain: boolean): Fn | null {
    const keys: string[] = [];
    const nodes: Extract<Node, { k: 'member' }>[] = [];
    let cur: Node = node;
    while (cur.k === 'member' && !cur.optional && cur.prop.k === 'str') {
      keys.unshift(cur.prop.v);
      nodes.unshift(cur);
      cur = cur.obj;
    }
    if (keys.length === 0) return null;
    const n = keys.length;
    if (cur.k === 'ident' && !scope.vars.has(cur.name)) {
      // The common `payload.a.b` shape: the environment lookup is part of the same closure.
      const name = cur.name;
      const identNode = cur;
      return (c) => {
        let o = envValue(c, name, identNode);
        for (let i = 0; i < n; i++) {
          const key = keys[i];
          if (typeof o === 'object' && o !== null && !Array.isArray(o)) o = ownValue(o as Record<string, Value>, key);
          else o = readMember(c, nodes[i], o, key, false);
        }
        return o;
      };
    }
    const base = this.compile(cur, scope, inChain);
    return (c) => {
      let o = base(c);
      for (let i = 0; i < n; i++) {
        const key = keys[i];
        if (typeof o === 'object' && o !== null && !Array.isArray(o)) o = ownValue(o as Record<string, Value>, key);
        else o = readMember(c, nodes[i], o, key, false);
      }
      return o;
    };
  }

  private unary(node: Extract<Node, { k: 'unary' }>, scope: Scope): Fn {
    const arg = this.compile(node.arg, scope, false);
    if (node.op === '!') {
      return (c) => {
        const v = arg(c);
        if (v === true) return false;
        if (v === false) return true;
        return c.fail('type', `invalid operation: !${typeName(v)} (${sourceText(this.info.source, node.arg)} is not a bool)`, node);
      };
    }
    return (c) => {
      const v = arg(c);
      c.at = node;
      return negate(c, node.op, v);
    };
  }

  private map(node: Extract<Node, { k: 'map' }>, scope: Scope): Fn {
    const pairs = node.pairs.map(({ key, value }) => ({
      key: key.k === 'str' ? key.v : this.compile(key, scope, false),
      keyNode: key,
      value: this.compile(value, scope, false),
    }));
    return (c) => {
      const out = newMap();
      for (const p of pairs) {
        let k: Value;
        if (typeof p.key === 'string') k = p.key;
        else {
          k = p.key(c);
          if (typeof k !== 'string') return c.fail('type', `map keys must be strings, got ${typeName(k)}`, p.keyNode);
          chargeKey(c, k);
        }
        out[k] = p.value(c);
      }
      return out;
    };
  }

  private call(node: Extract<Node, { k: 'call' }>, scope: Scope): Fn {
    const label = node.ns ? `${node.ns}.${node.name}` : node.name;
    if (!node.ns && hasOwn(PREDICATE_BUILTINS, node.name)) return this.predicateCall(node, scope);
    const def =
      node.ns === 'sprig'
        ? hasOwn(SPRIG, node.name)
          ? SPRIG[node.name]
          : undefined
        : hasOwn(BUILTINS, node.name)
          ? BUILTINS[node.name]
          : undefined;
    if (!def) {
      if (!node.ns && hasOwn(UNSUPPORTED_BUILTINS, node.name))
        return this.fail('syntax', `${node.name}: ${UNSUPPORTED_BUILTINS[node.name]}`, node);
      const hint = !node.ns && hasOwn(SPRIG, node.name) ? ` (did you mean sprig.${node.name}?)` : '';
      return this.fail('syntax', `unknown function ${label}${hint}`, node);
    }
    const n = node.args.length;
    if (n < def.min || n > def.max) {
      const want = def.min === def.max ? `${def.min}` : def.max === Infinity ? `at least ${def.min}` : `${def.min} to ${def.max}`;
      return this.fail('syntax', `${label} takes ${want} argument${want === '1' ? '' : 's'}, got ${n}`, node);
    }
    const args = node.args.map((a) => this.compile(a, scope, false));
    return (c) => {
      const values = new Array<Value>(args.length);
      for (let i = 0; i < args.length; i++) values[i] = args[i](c);
      c.at = node;
      return callBuiltin(c, label, def, values);
    };
  }

  private predicateCall(node: Extract<Node, { k: 'call' }>, scope: Scope): Fn {
    const [arrayNode, predNode, extraNode] = node.args;
    if (!predNode || predNode.k !== 'predicate') {
      if (!predNode && (node.name === 'count' || node.name === 'sum')) {
        return compilePredicateCall({
          name: node.name,
          node,
          array: this.compile(arrayNode, scope, false),
          body: null,
          extra: null,
          elemSlot: 0,
          indexSlot: 0,
          accSlot: 0,
          bodyCost: 1,
        });
      }
      return this.fail('syntax', `${node.name} expects a predicate as its second argument`, node);
    }
    const pointer = { elem: this.slot(), index: this.slot(), acc: node.name === 'reduce' ? this.slot() : -1 };
    const body = this.compile(predNode.body, { vars: scope.vars, pointer }, false);
    return compilePredicateCall({
      name: node.name,
      node,
      array: this.compile(arrayNode, scope, false),
      body,
      extra: extraNode ? this.compile(extraNode, scope, false) : null,
      elemSlot: pointer.elem,
      indexSlot: pointer.index,
      accSlot: pointer.acc,
      bodyCost: countNodes(predNode.body),
    });
  }
}

/**
 * An own property of an object, or nil. One property read instead of hasOwn + read on the hot
 * path: what an object inherits from Object.prototype is either a function (`constructor`,
 * `toString`, ...) or the `__proto__` accessor, and both are checked with hasOwn, so they stay
 * missing keys. (Data objects here are JSON-decoded or built by plugflow without prototypes.)
 */
/**
 * A key of a map: own properties only, so nothing inherited — not even a value some other code
 * put on Object.prototype — is ever visible to an expression. Functions read as missing.
 */
function ownValue(o: Record<string, Value>, key: string): Value {
  if (!hasOwn(o, key)) return null;
  const v = o[key];
  return v === undefined || typeof v === 'function' ? null : v;
}

/** A top-level name: an own property of the environment, else an "unknown name" error. */
function envValue(c: EvalContext, name: string, node: Node): Value {
  const env = c.env as Record<string, Value>;
  if (hasOwn(env, name)) {
    const v = env[name];
    return v === undefined || typeof v === 'function' ? null : v;
  }
  return c.fail('unknown-name', unknownNameReason(name, env), node);
}

function unknownNameReason(name: string, env: Record<string, unknown>): string {
  let reason = `unknown name ${name}`;
  if (name === 'null' || name === 'undefined' || name === 'None') return `${reason} (the empty value is written nil)`;
  if (hasOwn(BUILTINS, name) || hasOwn(PREDICATE_BUILTINS, name)) return `${reason} (${name} is a function: call it as ${name}(...))`;
  const names = Object.keys(env).filter((k) => /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(k));
  if (names.length > 0 && names.length <= 12) reason += ` (available: ${names.sort().join(', ')})`;
  return reason;
}
