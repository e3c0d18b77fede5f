/**
 * Expression errors. Every failure of the expression language — a syntax error, a type error
 * at run time, a limit hit, a result of the wrong type — is an ExprError, so callers (the event
 * endpoint, the engine, the CLI) can tell "the user's expression is wrong" apart from a bug with
 * one `instanceof` check. The message names the use ("selector", "when", ...), says what is
 * wrong and, when the source is known, shows `line:column` and a caret under the offending token,
 * because users write these by hand in YAML and need to see where.
 */

/** What went wrong, for callers that react differently (e.g. templates keep unresolved tags). */
export type ExprErrorCode =
  | 'syntax' // the text does not parse
  | 'limit' // a safety limit (size, depth, steps, memory) was hit
  | 'unknown-name' // a variable that the environment does not have
  | 'nil-member' // a member or index of nil
  | 'type' // an operator or function applied to values of the wrong type
  | 'index' // index out of range
  | 'regex' // an invalid regular expression
  | 'call' // a function failed (bad argument value, bad JSON, ...)
  | 'result' // the result does not satisfy the contract of its use (boolean, string, non-nil)
  | 'unresolved'; // a template tag names a variable that is not available

export interface ExprErrorInit {
  code: ExprErrorCode;
  reason: string;
  /** The use of the expression ("selector", "when", ...), printed first when set. */
  what?: string;
  /** Text the position refers to. */
  source?: string;
  /** Offset (UTF-16 code units) of the offending token in `source`. */
  offset?: number;
  /** Length of the offending token, for the caret line. */
  length?: number;
  /** Whether `what` is already part of `reason` (result-contract messages start with it). */
  reasonNamesUse?: boolean;
}

export class ExprError extends Error {
  readonly code: ExprErrorCode;
  /** The message without use prefix or position, e.g. for one-line logs. */
  readonly reason: string;
  readonly what?: string;
  readonly source?: string;
  readonly offset?: number;
  readonly length?: number;
  /** 1-based line and column of the offending token, when the position is known. */
  readonly line?: number;
  readonly column?: number;
  private readonly reasonNamesUse: boolean;

  constructor(init: ExprErrorInit) {
    super(formatMessage(init));
    this.name = 'ExprError';
    this.code = init.code;
    this.reason = init.reason;
    this.what = init.what;
    this.source = init.source;
    this.offset = init.offset;
    this.length = init.length;
    this.reasonNamesUse = init.reasonNamesUse ?? false;
    if (init.source !== undefined && init.offset !== undefined) {
      const { line, column } = lineColumn(init.source, init.offset);
      this.line = line;
      this.column = column;
    }
  }

  /** Alias of `code`. */
  get kind(): ExprErrorCode {
    return this.code;
  }

  /** The same error for another use name (e.g. when an engine helper wraps a compiled expression). */
  withWhat(what: string): ExprError {
    return new ExprError({ ...this.init(), what });
  }

  /**
   * The same error placed inside a larger text: a `{{=…}}` tag's expression starts at
   * `baseOffset` of a template, and the user wants the position in the template.
   */
  rebase(text: string, baseOffset: number, what = this.what): ExprError {
    return new ExprError({
      ...this.init(),
      what,
      source: text,
      offset: this.offset === undefined ? baseOffset : baseOffset + this.offset,
    });
  }

  private init(): ExprErrorInit {
    return {
      code: this.code,
      reason: this.reason,
      what: this.what,
      source: this.source,
      offset: this.offset,
      length: this.length,
      reasonNamesUse: this.reasonNamesUse,
    };
  }
}

/** 1-based line and column of `offset` in `text` (columns count UTF-16 code units). */
export function lineColumn(text: string, offset: number): { line: number; column: number } {
  const clamped = Math.max(0, Math.min(offset, text.length));
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < clamped; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: clamped - lineStart + 1 };
}

/**
 * The offending line and a caret line under it. Tabs in the prefix are kept so the caret lines
 * up in a terminal; very long lines are cut around the position.
 */
export function caretSnippet(text: string, offset: number, length = 1): string {
  const clamped = Math.max(0, Math.min(offset, text.length));
  const lineStart = text.lastIndexOf('\n', clamped - 1) + 1;
  let lineEnd = text.indexOf('\n', clamped);
  if (lineEnd < 0) lineEnd = text.length;
  let line = text.slice(lineStart, lineEnd);
  let col = clamped - lineStart;
  const maxWidth = 120;
  if (line.length > maxWidth) {
    const from = Math.max(0, Math.min(col - 40, line.length - maxWidth));
    line = (from > 0 ? '…' : '') + line.slice(from, from + maxWidth) + (from + maxWidth < line.length ? '…' : '');
    col = col - from + (from > 0 ? 1 : 0);
  }
  const prefix = line.slice(0, col).replace(/[^\t]/g, ' ');
  const width = Math.max(1, Math.min(length, line.length - col));
  return `  ${line}\n  ${prefix}${'^'.repeat(width)}`;
}

function formatMessage(init: ExprErrorInit): string {
  let head = init.reason;
  if (init.what && !init.reasonNamesUse) head = `${init.what}: ${head}`;
  if (init.source === undefined || init.offset === undefined) return head;
  const { line, column } = lineColumn(init.source, init.offset);
  return `${head} at ${line}:${column}\n${caretSnippet(init.source, init.offset, init.length ?? 1)}`;
}

export function isExprError(err: unknown): err is ExprError {
  return err instanceof ExprError;
}
