/**
 * The postfix part of the expression parser (parser.ts): member access `a.b` and `a?.b`, indexes
 * and slices `a[i]`, `a[i:j]`, and `sprig.fn(...)` calls. Optional chains keep everything after
 * a `?.` inside one chain node, so `?.` short-circuits all of it.
 */
import type { Node } from './ast.js';
import type { Token } from './lexer.js';
import { describe, TokenCursor } from './token-cursor.js';

export abstract class PostfixParser extends TokenCursor {
  protected abstract parseExpression(minPrec: number): Node;
  protected abstract parseCall(name: Token, leading: Node[], start: number): Node;

  protected parsePostfix(node: Node): Node {
    for (;;) {
      const t = this.cur;
      if (t.kind === 'op' && (t.value === '.' || t.value === '?.')) {
        const optional = t.value === '?.';
        this.next();
        if (optional && this.is('bracket', '[')) {
          node = this.parseIndex(node, true);
          continue;
        }
        const prop = this.cur;
        if (prop.kind !== 'ident' && !(prop.kind === 'op' && /^[A-Za-z]+$/.test(prop.value))) {
          this.fail(`expected a property name after ${JSON.stringify(t.value)}, got ${describe(prop)}`, prop);
        }
        this.next();
        if (this.is('bracket', '(')) {
          if (node.k === 'ident' && node.name === 'sprig' && !optional) {
            const call = this.parseCall(prop, [], node.s);
            if (call.k === 'call') call.ns = 'sprig';
            node = call;
            continue;
          }
          this.fail(`method calls are not supported (${this.source.slice(node.s, prop.end)}(...)); call a builtin function instead`, prop);
        }
        const key = this.mk({ k: 'str', v: prop.value, s: prop.start, e: prop.end, p: prop.start, pe: prop.end } as const);
        node = this.wrapChain(
          node,
          (obj) => this.mk({ k: 'member', obj, prop: key, optional, s: node.s, e: prop.end, p: prop.start, pe: prop.end }),
          optional,
        );
        continue;
      }
      if (t.kind === 'bracket' && t.value === '[') {
        node = this.parseIndex(node, false);
        continue;
      }
      return node;
    }
  }

  /** Member access inside an optional chain stays inside the chain node, so `?.` short-circuits all of it. */
  private wrapChain(node: Node, build: (obj: Node) => Node, optional: boolean): Node {
    if (node.k === 'chain') {
      const inner = build(node.node);
      node.node = inner;
      node.e = inner.e;
      return node;
    }
    const built = build(node);
    if (!optional) return built;
    return this.mk({ k: 'chain', node: built, s: built.s, e: built.e, p: built.p, pe: built.pe });
  }

  private parseIndex(node: Node, optional: boolean): Node {
    const open = this.expect('bracket', '[', 'to index');
    let to: Node | null = null;
    if (this.is('op', ':')) {
      this.next();
      if (!this.is('bracket', ']')) to = this.parseExpression(0);
      const close = this.expect('bracket', ']', `to close the slice opened at ${this.locate(open.start)}`);
      return this.wrapChain(
        node,
        (obj) => this.mk({ k: 'slice', obj, from: null, to, s: node.s, e: close.end, p: open.start, pe: close.end }),
        optional,
      );
    }
    const from = this.parseExpression(0);
    if (this.is('op', ':')) {
      this.next();
      if (!this.is('bracket', ']')) to = this.parseExpression(0);
      const close = this.expect('bracket', ']', `to close the slice opened at ${this.locate(open.start)}`);
      const f = from;
      return this.wrapChain(
        node,
        (obj) => this.mk({ k: 'slice', obj, from: f, to, s: node.s, e: close.end, p: open.start, pe: close.end }),
        optional,
      );
    }
    const close = this.expect('bracket', ']', `to close the index opened at ${this.locate(open.start)}`);
    const prop = from;
    return this.wrapChain(
      node,
      (obj) => this.mk({ k: 'member', obj, prop, optional, s: node.s, e: close.end, p: open.start, pe: close.end }),
      optional,
    );
  }
}
