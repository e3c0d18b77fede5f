import type { Node } from './ast.js';
import { regexFor } from './builtins-support.js';
import { nodeError, sourceText, type EvalContext, type ProgramInfo } from './context.js';
import type { ExprLimits } from './limits.js';
import { add, arith, compare, inOp, inStringSet, range, stringOperands } from './ops.js';
import type { Fn } from './predicates.js';
import { Regex, RegexSyntaxError } from './regex/vm.js';
import { typeName, valuesEqual, type Value } from './values.js';

/**
 * Binary operators, compiled with the shortcuts that make selectors cheap: `x == nil` and
 * `x != nil` test one value, `x == ["a"]` compares against the fixed list directly, `x in
 * ["a", "b"]` becomes a set lookup, and `x matches "literal"` compiles its regex once.
 */

type BinaryNode = Extract<Node, { k: 'binary' }>;

export function compileBinary(node: BinaryNode, compileChild: (n: Node) => Fn, info: ProgramInfo, limits: ExprLimits): Fn {
  const { op } = node;
  const L = compileChild(node.left);
  if (op === 'in' && node.right.k === 'array' && node.right.items.length > 0 && node.right.items.every((i) => i.k === 'str')) {
    const set = new Set(node.right.items.map((i) => (i as { v: string }).v));
    const text = sourceText(info.source, node.right);
    return (c) => {
      const v = L(c);
      c.at = node;
      return inStringSet(c, v, set, text);
    };
  }
  if (op === 'matches' && node.right.k === 'str') return matchesLiteral(node, L, node.right, info, limits);
  const R = compileChild(node.right);
  const rightNil = node.right.k === 'nil';
  const leftNil = node.left.k === 'nil';
  switch (op) {
    case '&&':
    case '||': {
      const stop = op === '||';
      return (c) => {
        const a = L(c);
        if (a === stop) return stop;
        if (a !== !stop) return boolOperand(c, node, 'left', a, info);
        const b = R(c);
        if (b === true || b === false) return b;
        return boolOperand(c, node, 'right', b, info);
      };
    }
    case '==':
    case '!=': {
      const want = op === '==';
      if (rightNil || leftNil) {
        const other = rightNil ? L : R;
        return (c) => {
          const v = other(c);
          return (v === null || v === undefined) === want;
        };
      }
      const list = constantStringList(node.right) ?? constantStringList(node.left);
      if (list) {
        // `x == ["a", "b"]`: element-wise === is exact for strings, and the list is short and fixed.
        const other = constantStringList(node.right) ? L : R;
        const n = list.length;
        return (c) => {
          const v = other(c);
          if (!Array.isArray(v) || v.length !== n) return !want;
          for (let i = 0; i < n; i++) if (v[i] !== list[i]) return !want;
          return want;
        };
      }
      return (c) => {
        const a = L(c);
        const b = R(c);
        c.at = node;
        if (typeof a === 'string') return valuesEqual(a, b, c) === want;
        if (a === b) return want;
        return valuesEqual(a, b, c) === want;
      };
    }
    case '??':
      return (c) => {
        const a = L(c);
        return a === null || a === undefined ? R(c) : a;
      };
    case '+':
      return (c) => {
        const a = L(c);
        const b = R(c);
        c.at = node;
        return add(c, a, b);
      };
    case '-':
    case '*':
    case '/':
    case '%':
    case '**':
      return (c) => {
        const a = L(c);
        const b = R(c);
        c.at = node;
        return arith(c, op, a, b);
      };
    case '<':
    case '>':
    case '<=':
    case '>=':
      return (c) => {
        const a = L(c);
        const b = R(c);
        c.at = node;
        return compare(c, op, a, b);
      };
    case 'in':
      return (c) => {
        const a = L(c);
        const b = R(c);
        c.at = node;
        return inOp(c, a, b);
      };
    case '..':
      return (c) => {
        const a = L(c);
        const b = R(c);
        c.at = node;
        return range(c, a, b);
      };
    case 'contains':
    case 'startsWith':
    case 'endsWith':
    case 'matches':
      return (c) => {
        const a = L(c);
        const b = R(c);
        c.at = node;
        const s = stringOperands(c, op, a, b);
        if (!s) return false;
        if (op === 'contains') return s[0].includes(s[1]);
        if (op === 'startsWith') return s[0].startsWith(s[1]);
        if (op === 'endsWith') return s[0].endsWith(s[1]);
        return regexFor(c, s[1]).test(s[0], c);
      };
    default:
      throw nodeError(info, 'syntax', `unknown operator ${op}`, node);
  }
}

/** The strings of a list literal that holds only string literals, else null. */
function constantStringList(node: Node): readonly string[] | null {
  if (node.k !== 'array' || !node.items.every((i) => i.k === 'str')) return null;
  return node.items.map((i) => (i as { v: string }).v);
}

function boolOperand(c: EvalContext, node: BinaryNode, side: 'left' | 'right', v: Value, info: ProgramInfo): never {
  const operand = side === 'left' ? node.left : node.right;
  return c.fail('type', `the ${side} operand of ${node.op} must be a bool, got ${typeName(v)} (${sourceText(info.source, operand)})`, node);
}

/** `x matches "literal"`: the pattern is compiled (and checked) with the expression. */
function matchesLiteral(node: Node, L: Fn, pattern: Extract<Node, { k: 'str' }>, info: ProgramInfo, limits: ExprLimits): Fn {
  let re: Regex;
  try {
    re = Regex.compile(pattern.v, limits.maxRegexProgram);
  } catch (err) {
    if (err instanceof RegexSyntaxError)
      throw nodeError(info, 'regex', `invalid regular expression ${JSON.stringify(pattern.v)}: ${err.message}`, pattern);
    throw err;
  }
  return (c) => {
    const a = L(c);
    if (a === null || a === undefined) return false;
    c.at = node;
    if (typeof a !== 'string') return c.fail('type', `invalid operation: ${typeName(a)} matches string (the left side must be a string)`);
    return re.test(a, c);
  };
}
