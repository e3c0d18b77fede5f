/**
 * Where a `{{= … }}` expression tag ends, shared by templates (template.ts) and the `when`
 * dialect (when.ts) so both read the same tag the same way: a `}}` closes the tag only outside
 * quotes ('…', "…", `…`; backslash escapes in the first two) and outside brackets, so a string
 * holding `}}` or a nested map literal does not end it early.
 */

/** Index of the `}}` that closes an expression starting at `from`, or -1 when none does. */
export function findExpressionEnd(text: string, from: number): number {
  let depth = 0;
  for (let i = from; i < text.length; i++) {
    const ch = text[i];
    if (ch === '"' || ch === "'" || ch === '`') {
      const quote = ch;
      i++;
      while (i < text.length && text[i] !== quote) i += text[i] === '\\' && quote !== '`' ? 2 : 1;
    } else if (ch === '(' || ch === '[' || ch === '{') depth++;
    else if (ch === '}' && depth === 0 && text[i + 1] === '}') return i;
    else if (ch === ')' || ch === ']' || ch === '}') depth = Math.max(0, depth - 1);
  }
  return -1;
}
