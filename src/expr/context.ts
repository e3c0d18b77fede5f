import type { Node } from './ast.js';
import { ExprError, type ExprErrorCode } from './errors.js';
import type { ExprLimits } from './limits.js';
import type { Meter, Value, ValueMap } from './values.js';

/** What a compiled program knows about itself, for error messages. */
export interface ProgramInfo {
  source: string;
  what?: string;
}

/**
 * State of one evaluation: the environment, the slots of `let` variables and predicate
 * pointers, and the step budget. `at` is the node being evaluated by an operation that may
 * fail deep inside a helper (equality, JSON, a builtin), so the error can point at it.
 */
export class EvalContext implements Meter {
  steps = 0;
  /** Estimated bytes built so far (see cost.ts). */
  bytes = 0;
  at: Node | null = null;
  env: ValueMap;
  readonly slots: Value[];
  readonly maxValueDepth: number;
  readonly maxStringLength: number;

  constructor(
    readonly info: ProgramInfo,
    readonly limits: ExprLimits,
    slotCount: number,
  ) {
    this.env = EMPTY_ENV;
    this.slots = slotCount > 0 ? new Array<Value>(slotCount).fill(null) : EMPTY;
    this.maxValueDepth = limits.maxValueDepth;
    this.maxStringLength = limits.maxStringLength;
  }

  /** Prepares the context for one evaluation (contexts are reused to avoid allocating per call). */
  begin(env: ValueMap): void {
    this.env = env;
    this.steps = 0;
    this.bytes = 0;
    this.at = null;
  }

  /** Drops references to the last evaluation's data so they can be collected. */
  end(): void {
    this.env = EMPTY_ENV;
    if (this.slots.length > 0) this.slots.fill(null);
  }

  charge(steps: number): void {
    this.steps += steps;
    if (this.steps > this.limits.maxSteps) {
      this.fail('limit', `evaluation took more than ${this.limits.maxSteps} steps (the expression or its input is too large)`);
    }
  }

  alloc(bytes: number): void {
    this.bytes += bytes;
    if (this.bytes > this.limits.maxMemory) {
      this.fail(
        'limit',
        `evaluation would build more than ${this.limits.maxMemory >> 20} MiB of values (the expression or its input is too large)`,
      );
    }
  }

  limit(reason: string): never {
    return this.fail('limit', reason);
  }

  /** Throws an ExprError pointing at `node` (default: the node being evaluated). */
  fail(code: ExprErrorCode, reason: string, node: Node | null = this.at): never {
    throw nodeError(this.info, code, reason, node);
  }

  /** Source text of a sub-expression, for messages ("payload.a is nil"). */
  text(node: Node): string {
    return sourceText(this.info.source, node);
  }

  checkString(s: string): string {
    if (s.length > this.limits.maxStringLength) this.limit(`result string would be longer than ${this.limits.maxStringLength} characters`);
    return s;
  }
}

const EMPTY: Value[] = [];
const EMPTY_ENV: ValueMap = Object.freeze(Object.create(null) as ValueMap);

export function nodeError(info: ProgramInfo, code: ExprErrorCode, reason: string, node: Node | null): ExprError {
  if (!node) return new ExprError({ code, reason, what: info.what, source: info.source, offset: 0, length: info.source.length });
  return new ExprError({ code, reason, what: info.what, source: info.source, offset: node.p, length: Math.max(1, node.pe - node.p) });
}

export function sourceText(source: string, node: Node): string {
  const text = source.slice(node.s, node.e).replace(/\s+/g, ' ').trim();
  return text.length > 60 ? text.slice(0, 59) + '…' : text;
}

/** Marks "an optional chain met nil": members inside the chain pass it on, the chain turns it into nil. */
export const SHORT: unique symbol = Symbol('optional-chain-nil');
