/**
 * AST of the expression language. Every node keeps two ranges: `s`..`e` is the whole
 * sub-expression (used to quote it in messages such as "payload.a is nil"), `p`..`pe` is the
 * token to put the caret under when this node fails (an operator, a property name, a call name).
 */
export interface Span {
  s: number;
  e: number;
  p: number;
  pe: number;
}

export type Node =
  | (Span & { k: 'nil' })
  | (Span & { k: 'bool'; v: boolean })
  | (Span & { k: 'int'; v: bigint })
  | (Span & { k: 'float'; v: number })
  | (Span & { k: 'str'; v: string })
  | (Span & { k: 'ident'; name: string })
  /** `$env`: the whole environment as a map. */
  | (Span & { k: 'env' })
  /** `#`, `#index`, `#acc` inside a predicate; `name` is '' for the element itself. */
  | (Span & { k: 'pointer'; name: string })
  | (Span & { k: 'member'; obj: Node; prop: Node; optional: boolean })
  | (Span & { k: 'slice'; obj: Node; from: Node | null; to: Node | null })
  /** Boundary of an optional chain: a `?.` on nil anywhere inside makes the whole chain nil. */
  | (Span & { k: 'chain'; node: Node })
  | (Span & { k: 'unary'; op: string; arg: Node })
  | (Span & { k: 'binary'; op: string; left: Node; right: Node })
  /** `c ? a : b`; for the short form `c ?: b`, `then` is null and the condition is the value. */
  | (Span & { k: 'cond'; cond: Node; then: Node | null; else: Node })
  | (Span & { k: 'array'; items: Node[] })
  | (Span & { k: 'map'; pairs: { key: Node; value: Node }[] })
  /** A builtin call, or a `sprig.name(...)` call when `ns` is 'sprig'. */
  | (Span & { k: 'call'; name: string; ns: '' | 'sprig'; args: Node[] })
  /** The closure argument of a predicate builtin (`filter(xs, {# > 1})`). */
  | (Span & { k: 'predicate'; body: Node })
  | (Span & { k: 'let'; name: string; value: Node; body: Node });

export type NodeKind = Node['k'];

/** Calls `fn` on each direct child of `node`. */
export function forEachChild(node: Node, fn: (child: Node) => void): void {
  switch (node.k) {
    case 'member':
      fn(node.obj);
      fn(node.prop);
      break;
    case 'slice':
      fn(node.obj);
      if (node.from) fn(node.from);
      if (node.to) fn(node.to);
      break;
    case 'chain':
      fn(node.node);
      break;
    case 'unary':
      fn(node.arg);
      break;
    case 'binary':
      fn(node.left);
      fn(node.right);
      break;
    case 'cond':
      fn(node.cond);
      if (node.then) fn(node.then);
      fn(node.else);
      break;
    case 'array':
      node.items.forEach(fn);
      break;
    case 'map':
      for (const pair of node.pairs) {
        fn(pair.key);
        fn(pair.value);
      }
      break;
    case 'call':
      node.args.forEach(fn);
      break;
    case 'predicate':
      fn(node.body);
      break;
    case 'let':
      fn(node.value);
      fn(node.body);
      break;
    default:
      break;
  }
}

/** Number of nodes in the tree (used to charge one predicate iteration). */
export function countNodes(node: Node): number {
  let n = 1;
  forEachChild(node, (c) => {
    n += countNodes(c);
  });
  return n;
}
