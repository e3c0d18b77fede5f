import type { Node } from './ast.js';
import { ExprError } from './errors.js';
import type { Token } from './lexer.js';
import type { ExprLimits } from './limits.js';

/**
 * Token navigation for the parser, with the two guards every parse goes through: the AST size
 * limit (counted as nodes are made) and the nesting depth limit (counted on recursion).
 */
export class TokenCursor {
  protected pos = 0;
  protected depth = 0;
  nodeCount = 0;

  constructor(
    protected readonly source: string,
    protected readonly tokens: Token[],
    protected readonly limits: ExprLimits,
    protected readonly what?: string,
  ) {}

  protected get cur(): Token {
    return this.tokens[this.pos];
  }

  protected peek(k = 1): Token {
    return this.tokens[Math.min(this.pos + k, this.tokens.length - 1)];
  }

  protected next(): Token {
    const t = this.tokens[this.pos];
    if (this.pos < this.tokens.length - 1) this.pos++;
    return t;
  }

  protected is(kind: Token['kind'], value?: string): boolean {
    return this.cur.kind === kind && (value === undefined || this.cur.value === value);
  }

  protected expect(kind: Token['kind'], value: string, context: string): Token {
    if (this.is(kind, value)) return this.next();
    const t = this.cur;
    return this.fail(
      t.kind === 'eof'
        ? `unexpected end of expression, expected ${JSON.stringify(value)} ${context}`
        : `unexpected token ${describe(t)}, expected ${JSON.stringify(value)} ${context}`,
      t,
    );
  }

  protected fail(reason: string, at: { start: number; end: number }, code: 'syntax' | 'limit' = 'syntax'): never {
    throw new ExprError({ code, reason, what: this.what, source: this.source, offset: at.start, length: Math.max(1, at.end - at.start) });
  }

  /** Creates a node, counting it against the AST size limit. */
  protected mk<T extends Node>(node: T): T {
    if (++this.nodeCount > this.limits.maxNodes) {
      this.fail(`expression has more than ${this.limits.maxNodes} nodes`, { start: node.p, end: node.pe }, 'limit');
    }
    return node;
  }

  protected enter(at: Token): void {
    if (++this.depth > this.limits.maxDepth) this.fail(`expression is nested more than ${this.limits.maxDepth} levels deep`, at, 'limit');
  }

  protected locate(offset: number): string {
    let line = 1;
    let col = 1;
    for (let i = 0; i < offset; i++) {
      if (this.source.charCodeAt(i) === 10) {
        line++;
        col = 1;
      } else col++;
    }
    return `${line}:${col}`;
  }
}

/** A token as users see it in messages. */
export function describe(t: Token): string {
  if (t.kind === 'eof') return 'end of expression';
  if (t.kind === 'string') return `string ${JSON.stringify(t.value)}`;
  return JSON.stringify(t.value);
}
