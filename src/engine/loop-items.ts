/**
 * Loops: `withItems` (a literal list), `withParam` (a JSON list, usually from a previous step's
 * output) and `withSequence` (numbers). A looped step or task runs once per item; each run sees
 * `{{item}}` and, for object items, `{{item.<field>}}`.
 *
 * Expansion happens at run time, after the loop source was substituted, so `withParam:
 * "{{steps.gen.outputs.result}}"` works.
 */
import { parseUserJson, type Sequence } from '../api/index.js';
import { DEFAULT_MAX_LOOP_ITEMS, expandSequence, SequenceError, tooManyItems } from './sequence.js';
import { errorMessage } from '../log/error-message.js';

/** The loop fields a step or task may carry. */
export interface LoopSource {
  withItems?: unknown[];
  withParam?: string;
  withSequence?: Sequence;
}

export class LoopError extends Error {
  constructor(
    /** `withItems`, `withParam` or `withSequence`. */
    readonly field: string,
    detail: string,
  ) {
    super(detail);
  }
}

/** True when the step or task loops. */
export function isLooped(src: LoopSource): boolean {
  return src.withItems !== undefined || src.withParam !== undefined || src.withSequence !== undefined;
}

/**
 * The items of an (already substituted) loop source. Throws LoopError naming the field when the
 * source is not a list, e.g. `withParam` that is not JSON, or has more than `maxItems` items.
 */
export function expandLoop(src: LoopSource, maxItems = DEFAULT_MAX_LOOP_ITEMS): unknown[] {
  if (src.withItems !== undefined) {
    if (!Array.isArray(src.withItems)) throw new LoopError('withItems', 'must be a list');
    if (src.withItems.length > maxItems) throw new LoopError('withItems', tooManyItems(src.withItems.length, maxItems));
    return src.withItems;
  }
  if (src.withParam !== undefined) {
    let parsed: unknown;
    try {
      parsed = parseUserJson(src.withParam, 'withParam');
    } catch (err) {
      throw new LoopError(
        'withParam',
        err instanceof SyntaxError ? `is not a JSON list: ${preview(src.withParam)}` : `${errorMessage(err).replace(/^withParam: /, '')}`,
      );
    }
    if (!Array.isArray(parsed)) throw new LoopError('withParam', `is not a JSON list: ${preview(src.withParam)}`);
    if (parsed.length > maxItems) throw new LoopError('withParam', tooManyItems(parsed.length, maxItems));
    return parsed;
  }
  if (src.withSequence !== undefined) {
    try {
      return expandSequence(src.withSequence, maxItems);
    } catch (err) {
      if (err instanceof SequenceError) throw new LoopError('withSequence', err.message);
      throw err;
    }
  }
  return [];
}

/** A JSON value as a parameter string: strings as they are, everything else as compact JSON. */
export function stringifyValue(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined) return '';
  return JSON.stringify(value);
}

/**
 * The variables an item provides: `item`, and for objects `item.<key>` (recursively for nested
 * objects, `item.a.b`). Values are strings as templates see them.
 */
export function itemVariables(item: unknown): Record<string, string> {
  const vars: Record<string, string> = { item: stringifyValue(item) };
  const walk = (prefix: string, value: unknown): void => {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return;
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      vars[`${prefix}.${k}`] = stringifyValue(v);
      walk(`${prefix}.${k}`, v);
    }
  };
  walk('item', item);
  return vars;
}

function preview(text: string): string {
  const t = text.length > 60 ? `${text.slice(0, 60)}…` : text;
  return JSON.stringify(t);
}
