import type { Node, Span } from './ast.js';
import { ExprError } from './errors.js';
import { tokenize, type Token } from './lexer.js';
import type { ExprLimits } from './limits.js';
import { BINARY, NEGATABLE, PREDICATE_BUILTINS, UNARY } from './operators.js';
import { PostfixParser } from './postfix-parser.js';
import { describe } from './token-cursor.js';

/**
 * Pratt parser for expr-lang's syntax. Precedences (higher binds tighter), as in expr-lang:
 *   `|` 0 · `or` `||` 10 · `and` `&&` 15 · comparisons `== != < > <= >= in matches contains
 *   startsWith endsWith` 20 · `..` 25 · `+ -` 30 · `* / %` 60 · `**` `^` 100 (right) · `??` 500;
 *   unary `! not` 50 and `- +` 90; `?:` lowest (right). Comparisons chain: `a < b < c` means
 *   `a < b && b < c`. `not in`, `not matches`, ... negate their operator.
 */

export interface ParseResult {
  node: Node;
  nodeCount: number;
}

export function parse(source: string, limits: ExprLimits, what?: string): ParseResult {
  if (source.length > limits.maxSourceLength) {
    throw new ExprError({
      code: 'limit',
      what,
      reason: `expression is ${source.length} characters long, more than the limit of ${limits.maxSourceLength}`,
    });
  }
  const p = new Parser(source, tokenize(source, what), limits, what);
  const node = p.parseRoot();
  return { node, nodeCount: p.nodeCount };
}

class Parser extends PostfixParser {
  private predicateDepth = 0;

  parseRoot(): Node {
    if (this.cur.kind === 'eof') this.fail('empty expression', this.cur);
    const node = this.parseExpression(0);
    const rest = this.peek(0);
    if (rest.kind !== 'eof') this.fail(`unexpected token ${describe(rest)}`, rest);
    return node;
  }

  protected parseExpression(minPrec: number): Node {
    this.enter(this.cur);
    try {
      if (minPrec === 0 && this.is('op', 'let')) return this.parseLet();
      let left = this.parsePrimary();
      let prevOp = '';
      for (;;) {
        let opTok = this.cur;
        if (opTok.kind !== 'op') break;
        let negate: Token | null = null;
        if (opTok.value === 'not') {
          const suffix = this.peek();
          if (!(suffix.kind === 'op' && NEGATABLE.has(suffix.value))) {
            this.fail(`unexpected token ${describe(suffix)} after "not" (expected in, matches, contains, startsWith or endsWith)`, suffix);
          }
          if (BINARY[suffix.value].prec < minPrec) break;
          negate = opTok;
          this.next();
          opTok = this.cur;
        }
        const info = Object.hasOwn(BINARY, opTok.value) ? BINARY[opTok.value] : undefined;
        if (!info || info.prec < minPrec) break;
        this.next();
        if (opTok.value === '|') {
          const name = this.cur;
          if (name.kind !== 'ident') this.fail(`expected a function call after "|", got ${describe(name)}`, name);
          this.next();
          left = this.parseCall(name, [left], left.s);
          prevOp = '|';
          continue;
        }
        if (prevOp === '??' && opTok.value !== '??') {
          this.fail(
            `operator ${JSON.stringify(opTok.value)} and nil coalescing (??) cannot be mixed; wrap one of them in parentheses`,
            opTok,
          );
        }
        if (info.prec === 20) {
          left = this.parseComparison(left, opTok, negate);
          prevOp = opTok.value;
          continue;
        }
        const right = this.parseExpression(info.right ? info.prec : info.prec + 1);
        left = this.binary(opTok, left, right, negate);
        prevOp = opTok.value;
      }
      if (minPrec === 0) left = this.parseConditional(left);
      return left;
    } finally {
      this.depth--;
    }
  }

  private binary(opTok: Token, left: Node, right: Node, negate: Token | null): Node {
    const op = opTok.value === 'and' ? '&&' : opTok.value === 'or' ? '||' : opTok.value === '^' ? '**' : opTok.value;
    const node: Node = this.mk({ k: 'binary', op, left, right, s: left.s, e: right.e, p: opTok.start, pe: opTok.end });
    if (!negate) return node;
    return this.mk({ k: 'unary', op: '!', arg: node, s: node.s, e: node.e, p: negate.start, pe: opTok.end });
  }

  /** `a < b <= c` becomes `a < b && b <= c` (the middle operand is shared, evaluated per use). */
  private parseComparison(left: Node, opTok: Token, negate: Token | null): Node {
    let root: Node | null = null;
    let op = opTok;
    let neg = negate;
    for (;;) {
      const right = this.parseExpression(21);
      const cmp = this.binary(op, left, right, neg);
      root = root === null ? cmp : this.mk({ k: 'binary', op: '&&', left: root, right: cmp, s: root.s, e: cmp.e, p: op.start, pe: op.end });
      left = right;
      const t = this.cur;
      if (t.kind === 'op' && Object.hasOwn(BINARY, t.value) && BINARY[t.value].prec === 20) {
        op = this.next();
        neg = null;
        continue;
      }
      if (t.kind === 'op' && t.value === 'not' && this.peek().kind === 'op' && NEGATABLE.has(this.peek().value)) {
        neg = this.next();
        op = this.next();
        continue;
      }
      return root;
    }
  }

  private parseConditional(cond: Node): Node {
    while (this.is('op', '?')) {
      const q = this.next();
      if (this.is('op', ':')) {
        this.next();
        const other = this.parseExpression(0);
        cond = this.mk({ k: 'cond', cond, then: null, else: other, s: cond.s, e: other.e, p: q.start, pe: q.end });
      } else {
        const a = this.parseExpression(0);
        this.expect('op', ':', 'in the conditional (cond ? a : b)');
        const b = this.parseExpression(0);
        cond = this.mk({ k: 'cond', cond, then: a, else: b, s: cond.s, e: b.e, p: q.start, pe: q.end });
      }
    }
    return cond;
  }

  private parseLet(): Node {
    const letTok = this.next();
    const name = this.cur;
    if (name.kind !== 'ident') this.fail(`expected a variable name after "let", got ${describe(name)}`, name);
    if (['true', 'false', 'nil', '$env'].includes(name.value))
      this.fail(`cannot use ${JSON.stringify(name.value)} as a variable name`, name);
    this.next();
    this.expect('op', '=', 'after the variable name in "let"');
    if (this.is('op', '=')) this.fail('unexpected "=": use "let name = value;"', this.cur);
    const value = this.parseExpression(0);
    this.expect('op', ';', 'after the value of "let"');
    const body = this.parseExpression(0);
    return this.mk({ k: 'let', name: name.value, value, body, s: letTok.start, e: body.e, p: name.start, pe: name.end });
  }

  private parsePrimary(): Node {
    const t = this.cur;
    if (t.kind === 'op' && Object.hasOwn(UNARY, t.value)) {
      this.next();
      const arg = this.parseExpression(UNARY[t.value]);
      const op = t.value === 'not' ? '!' : t.value;
      return this.parsePostfix(this.mk({ k: 'unary', op, arg, s: t.start, e: arg.e, p: t.start, pe: t.end }));
    }
    if (t.kind === 'bracket' && t.value === '(') {
      this.next();
      const inner = this.parseExpression(0);
      const close = this.expect('bracket', ')', `to close the "(" at ${this.locate(t.start)}`);
      inner.s = t.start;
      inner.e = close.end;
      return this.parsePostfix(inner);
    }
    if (t.kind === 'op' && (t.value === '#' || t.value === '.')) {
      if (this.predicateDepth === 0)
        this.fail(
          `cannot use ${t.value === '#' ? '#' : 'a leading "."'} outside a predicate (the closure argument of filter, map, all, ...)`,
          t,
        );
      let name = '';
      let end = t.end;
      if (t.value === '#') {
        this.next();
        const id = this.cur;
        if (id.kind === 'ident' && id.start === t.end) {
          if (id.value !== 'index' && id.value !== 'acc')
            this.fail(`unknown pointer #${id.value} (expected #, #index or #acc)`, { start: t.start, end: id.end });
          name = id.value;
          end = id.end;
          this.next();
        }
      }
      // A leading "." stays the current token: parsePostfix reads it as `#.name`.
      return this.parsePostfix(this.mk({ k: 'pointer', name, s: t.start, e: end, p: t.start, pe: end }));
    }
    return this.parseSecondary();
  }

  private parseSecondary(): Node {
    const t = this.next();
    const span = { s: t.start, e: t.end, p: t.start, pe: t.end };
    let node: Node;
    switch (t.kind) {
      case 'ident':
        if (t.value === 'true' || t.value === 'false') return this.mk({ k: 'bool', v: t.value === 'true', ...span });
        if (t.value === 'nil') return this.mk({ k: 'nil', ...span });
        if (this.is('bracket', '(')) node = this.parseCall(t, [], t.start);
        else if (t.value === '$env') node = this.mk({ k: 'env', ...span });
        else node = this.mk({ k: 'ident', name: t.value, ...span });
        break;
      case 'number':
        node = this.numberNode(t, span);
        break;
      case 'string':
        node = this.mk({ k: 'str', v: t.value, ...span });
        break;
      case 'bracket':
        if (t.value === '[') node = this.parseArray(t);
        else if (t.value === '{') node = this.parseMap(t);
        else this.fail(`unexpected token ${describe(t)}`, t);
        break;
      case 'eof':
        this.fail('unexpected end of expression', t);
        break;
      default:
        this.fail(`unexpected token ${describe(t)}`, t);
    }
    return this.parsePostfix(node);
  }

  private numberNode(t: Token, span: Span): Node {
    const text = t.value.replace(/_/g, '');
    const lower = text.toLowerCase();
    const isFloat = !/^0[xob]/.test(lower) && /[.e]/.test(lower);
    if (isFloat) {
      const v = Number(text);
      if (!Number.isFinite(v)) this.fail(`float literal ${t.value} is too large`, t);
      return this.mk({ k: 'float', v, ...span });
    }
    let v: bigint;
    try {
      v = BigInt(lower.startsWith('0o') ? '0o' + text.slice(2) : text);
    } catch {
      return this.fail(`invalid number literal ${t.value}`, t);
    }
    if (v > 0x7fffffffffffffffn) this.fail(`integer literal ${t.value} is too large (the largest is 9223372036854775807)`, t);
    return this.mk({ k: 'int', v, ...span });
  }

  protected parseCall(name: Token, leading: Node[], start: number): Node {
    const pred = Object.hasOwn(PREDICATE_BUILTINS, name.value) ? PREDICATE_BUILTINS[name.value] : undefined;
    const open = this.expect('bracket', '(', `to call ${name.value}`);
    const args = [...leading];
    if (pred) {
      const shapes = pred.args.slice(leading.length);
      const required = pred.args.length - pred.optional - leading.length;
      for (let i = 0; i < shapes.length; i++) {
        if (this.is('bracket', ')')) {
          if (i < required) this.fail(`${name.value} expects at least ${pred.args.length - pred.optional} arguments`, this.cur);
          break;
        }
        if (i > 0) this.expect('op', ',', `between the arguments of ${name.value}`);
        args.push(shapes[i] === 'pred' ? this.parsePredicate() : this.parseExpression(0));
      }
      if (this.is('op', ',')) this.next();
    } else {
      while (!this.is('bracket', ')')) {
        if (this.is('eof')) this.expect('bracket', ')', `to close the call of ${name.value} opened at ${this.locate(open.start)}`);
        if (args.length > leading.length) {
          this.expect('op', ',', `between the arguments of ${name.value}`);
          if (this.is('bracket', ')')) break;
        }
        args.push(this.parseExpression(0));
      }
    }
    const close = this.expect('bracket', ')', `to close the call of ${name.value} opened at ${this.locate(open.start)}`);
    return this.mk({ k: 'call', name: name.value, ns: '', args, s: start, e: close.end, p: name.start, pe: name.end });
  }

  private parsePredicate(): Node {
    const start = this.cur;
    const braces = this.is('bracket', '{');
    if (braces) this.next();
    this.predicateDepth++;
    const body = this.parseExpression(0);
    this.predicateDepth--;
    let end = body.e;
    if (braces) end = this.expect('bracket', '}', `to close the predicate opened at ${this.locate(start.start)}`).end;
    return this.mk({ k: 'predicate', body, s: start.start, e: end, p: start.start, pe: start.end });
  }

  private parseArray(open: Token): Node {
    const items: Node[] = [];
    while (!this.is('bracket', ']')) {
      if (this.is('eof')) this.expect('bracket', ']', `to close the list opened at ${this.locate(open.start)}`);
      if (items.length > 0) {
        this.expect('op', ',', 'between list elements');
        if (this.is('bracket', ']')) break;
      }
      items.push(this.parseExpression(0));
    }
    const close = this.expect('bracket', ']', `to close the list opened at ${this.locate(open.start)}`);
    return this.mk({ k: 'array', items, s: open.start, e: close.end, p: open.start, pe: open.end });
  }

  private parseMap(open: Token): Node {
    const pairs: { key: Node; value: Node }[] = [];
    while (!this.is('bracket', '}')) {
      if (this.is('eof')) this.expect('bracket', '}', `to close the map opened at ${this.locate(open.start)}`);
      if (pairs.length > 0) {
        this.expect('op', ',', 'between map entries');
        if (this.is('bracket', '}')) break;
      }
      const k = this.cur;
      let key: Node;
      if (k.kind === 'string' || k.kind === 'ident' || k.kind === 'number' || (k.kind === 'op' && /^[A-Za-z]/.test(k.value))) {
        this.next();
        key = this.mk({ k: 'str', v: k.value, s: k.start, e: k.end, p: k.start, pe: k.end });
      } else if (k.kind === 'bracket' && k.value === '(') {
        key = this.parseExpression(0);
      } else {
        this.fail(`a map key must be a quoted string, a number, a name, or an expression in parentheses; got ${describe(k)}`, k);
      }
      this.expect('op', ':', 'after the map key');
      pairs.push({ key, value: this.parseExpression(0) });
    }
    const close = this.expect('bracket', '}', `to close the map opened at ${this.locate(open.start)}`);
    return this.mk({ k: 'map', pairs, s: open.start, e: close.end, p: open.start, pe: open.end });
  }
}
