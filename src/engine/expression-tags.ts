/**
 * `{{…}}` tags inside an expression field (`retryStrategy.expression`), such as
 * `asInt(lastRetry.exitCode) > {{inputs.parameters.max}}` or
 * `lastRetry.status == '{{inputs.parameters.stop-on}}'`.
 *
 * The peer substitutes the tags as text and then evaluates the result, so a value can rewrite
 * the expression (`1 || true`). Here each tag's value is inserted as exactly one literal, so a
 * value — which may come from another step's output — can never change the expression's
 * structure:
 * - outside quotes: a number stays a number (a negative one in parentheses), `true`/`false`
 *   stay booleans, a JSON list or map becomes that list or map literal (re-serialised), and
 *   anything else becomes a string literal — whatever it contains;
 * - inside a quoted string the value is escaped for that quote, so it stays part of the string
 *   (as in the peer for ordinary values); inside a backtick string a value holding a backtick is
 *   refused, since a raw string cannot escape it.
 * Everything the peer accepts with ordinary values (numbers unquoted, strings quoted) gives the
 * same result.
 */

/** Renders one tag (its full text, `{{name}}` or `{{=expr}}`) to its value; throws if it cannot. */
export type TagValue = (tag: string) => string;

export class ExpressionTagError extends Error {}

export function substituteExpressionTags(expression: string, valueOf: TagValue): string {
  if (!expression.includes('{{')) return expression;
  let out = '';
  let i = 0;
  while (i < expression.length) {
    const ch = expression[i]!;
    if (ch === '{' && expression[i + 1] === '{') {
      const end = tagEnd(expression, i);
      out += literal(valueOf(expression.slice(i, end)));
      i = end;
      continue;
    }
    if (ch === '"' || ch === "'" || ch === '`') {
      const { text, end } = quoted(expression, i, valueOf);
      out += text;
      i = end;
      continue;
    }
    out += ch;
    i++;
  }
  return out;
}

/** A string literal starting at `start`, with the tags inside it replaced by escaped values. */
function quoted(s: string, start: number, valueOf: TagValue): { text: string; end: number } {
  const q = s[start]!;
  let text = q;
  let i = start + 1;
  while (i < s.length) {
    const ch = s[i]!;
    if (ch === '{' && s[i + 1] === '{') {
      const end = tagEnd(s, i);
      const value = valueOf(s.slice(i, end));
      if (q === '`' && value.includes('`')) {
        throw new ExpressionTagError(
          `the value of ${s.slice(i, end)} holds a backtick, which a \`raw string\` cannot hold: quote the tag with '…' instead`,
        );
      }
      text += q === '`' ? value : escapeFor(q, value);
      i = end;
      continue;
    }
    if (ch === '\\' && q !== '`' && i + 1 < s.length) {
      text += s.slice(i, i + 2);
      i += 2;
      continue;
    }
    text += ch;
    i++;
    if (ch === q) return { text, end: i };
  }
  return { text, end: i }; // unterminated: the compiler reports it
}

/** Index just past the `}}` closing the tag that opens at `open`. */
function tagEnd(s: string, open: number): number {
  let j = open + 2;
  while (j < s.length && /\s/.test(s[j]!)) j++;
  if (s[j] !== '=') {
    const close = s.indexOf('}}', open + 2);
    if (close < 0) throw new ExpressionTagError(`unclosed {{ tag (no matching }}) at offset ${open}`);
    return close + 2;
  }
  let depth = 0;
  for (let i = j + 1; i < s.length; i++) {
    const ch = s[i]!;
    if (ch === '"' || ch === "'" || ch === '`') {
      for (i++; i < s.length && s[i] !== ch; i++) if (s[i] === '\\' && ch !== '`') i++;
      continue;
    }
    if (ch === '(' || ch === '[' || ch === '{') depth++;
    else if (ch === '}' && depth === 0 && s[i + 1] === '}') return i + 2;
    else if (ch === ')' || ch === ']' || ch === '}') depth = Math.max(0, depth - 1);
  }
  throw new ExpressionTagError(`unclosed {{= tag (no matching }}) at offset ${open}`);
}

const NUMBER = /^(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/;

/** The value of an unquoted tag as one literal of the expression language. */
function literal(value: string): string {
  const v = value.trim();
  if (NUMBER.test(v)) return v;
  if (v.startsWith('-') && NUMBER.test(v.slice(1))) return `(${v})`;
  if (v === 'true' || v === 'false') return v;
  if (v.startsWith('[') || v.startsWith('{')) {
    try {
      return jsonLiteral(JSON.parse(v));
    } catch {
      // not JSON: a string like any other
    }
  }
  return JSON.stringify(value);
}

function jsonLiteral(v: unknown): string {
  if (v === null) return 'nil';
  if (Array.isArray(v)) return `[${v.map(jsonLiteral).join(', ')}]`;
  if (typeof v === 'object')
    return `{${Object.entries(v as Record<string, unknown>)
      .map(([k, x]) => `${JSON.stringify(k)}: ${jsonLiteral(x)}`)
      .join(', ')}}`;
  return JSON.stringify(v);
}

const ESCAPES: Record<string, string> = { '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** `value` written inside a `q`-quoted string literal so that it stays inside it. */
function escapeFor(q: string, value: string): string {
  return value.replace(/[\\\n\r\t"'\u0000-\u001f\u2028\u2029]/g, (c) => {
    if (c === q) return `\\${q}`;
    if (c === '"' || c === "'") return c;
    return ESCAPES[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
  });
}
