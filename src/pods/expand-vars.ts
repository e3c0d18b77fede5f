/**
 * `$(VAR)` references in a container's command, args, env values and subPathExpr (spec 002,
 * "Container field set"): a reference to a defined variable is replaced by its value; an
 * unresolved reference stays as written; `$$` becomes `$`, so `$$(VAR)` yields the literal
 * `$(VAR)`. A `$` followed by anything else stays.
 *
 * On a real node the kubelet does this; the local pod runner plays the kubelet and calls
 * expandVars. The pod builder calls escapeVars on values it generates (script source, JSON)
 * so that the expansion hands them to the process unchanged.
 */

/** A variable lookup: undefined means "not defined" (the reference then stays as written). */
export type VarLookup = (name: string) => string | undefined;

export function expandVars(input: string, lookup: VarLookup | Record<string, string>): string {
  const get: VarLookup = typeof lookup === 'function' ? lookup : (n) => (Object.hasOwn(lookup, n) ? lookup[n] : undefined);
  let out = '';
  let i = 0;
  while (i < input.length) {
    const ch = input[i];
    if (ch !== '$' || i + 1 >= input.length) {
      out += ch;
      i++;
      continue;
    }
    const next = input[i + 1];
    if (next === '$') {
      // Escaped dollar: `$$` → `$`, so `$$(X)` becomes the literal `$(X)`.
      out += '$';
      i += 2;
      continue;
    }
    if (next === '(') {
      const close = input.indexOf(')', i + 2);
      if (close === -1) {
        // No closing parenthesis: the rest is literal text.
        out += input.slice(i);
        break;
      }
      const name = input.slice(i + 2, close);
      const value = get(name);
      out += value === undefined ? input.slice(i, close + 1) : value;
      i = close + 1;
      continue;
    }
    out += ch;
    i++;
  }
  return out;
}

/** Escapes every `$` so that expandVars (or the kubelet) yields `input` unchanged. */
export function escapeVars(input: string): string {
  return input.replaceAll('$', '$$$$');
}
