/**
 * `{{…}}` tags inside a structured text — a `podSpecPatch`, YAML or JSON — rendered in the
 * document's string leaves only (issue 10 item 2). Substituting into the source text and parsing
 * afterwards let a value such as `"}}], "hostPID": true, …` rewrite the patch; here the structure
 * comes from the text with every tag masked, so no value can add, remove or reshape a field:
 *   1. each tag is replaced by a placeholder (private-use characters) and the masked text is
 *      parsed; the document's shape is now fixed;
 *   2. each scalar holding placeholders gets its tags back, as written in the text, and is
 *      rendered by the caller's leaf renderer: the value is always one scalar (a string literal
 *      inside `{{=…}}` uses the quote its YAML/JSON string does not: `"{{=sprig.trim('x')}}"`);
 *   3. a tag that is a whole unquoted value stands where a JSON value goes
 *      (`"limits": {{inputs.parameters.r}}`, `cpu: {{inputs.parameters.n}}`): its rendered text
 *      is read as exactly one JSON value (parseUserJson: no `__proto__`) and inserted as that
 *      value — a map, list, number, boolean, null or string — as the peer's textual substitution
 *      would when the value is well-formed. Text that is not JSON but one plain word or phrase
 *      (`1Gi`, `500m`, no `,:#"'[]{}` or line breaks) is that string, as YAML reads it; anything
 *      else (`1, "hostPID": true`) is refused naming the field and the tag, since only a second
 *      value or broken structure could be meant. A value can never reach beyond its own
 *      position. A quoted tag, or one with other text around it, always gives a string;
 *   4. tags in keys are refused: a key is structure.
 * The result is the document as compact JSON (valid YAML too), checked for `__proto__` keys.
 */
import { isPair, isScalar, isSeq, parseDocument, visit } from 'yaml';
import { checkUserValue, parseUserJson } from '../api/index.js';
import { compileTemplate } from '../expr/index.js';

const OPEN = '\uE000';
const CLOSE = '\uE001';
const PLACEHOLDER = /\uE000(\d+)\uE001/g;
const WHOLE = /^\uE000(\d+)\uE001$/;
/** Text a whole unquoted tag may give as a plain string when it is not JSON: no structure characters. */
const PLAIN_WORDS = /^[^,:#"'[\]{}\n\r\t\\]*$/;

/**
 * Renders the tags of `text` (a YAML or JSON document) in its string leaves with `renderLeaf`,
 * which gets the leaf's text with its tags and the leaf's field (`<field>.containers[0].image`).
 * Text without tags is returned as it is. Errors name `field`.
 */
export function renderStructuredText(text: string, field: string, renderLeaf: (text: string, field: string) => string): string {
  if (!text.includes('{{')) return text;
  if (text.includes(OPEN) || text.includes(CLOSE))
    throw new Error(`${field} may not contain the characters U+E000 and U+E001 (plugflow uses them to mask tags)`);
  const spans = compileTemplate(text, field).tagSpans;
  let masked = '';
  let at = 0;
  spans.forEach((span, i) => {
    masked += `${text.slice(at, span.start)}${OPEN}${i}${CLOSE}`;
    at = span.start + span.raw.length;
  });
  masked += text.slice(at);

  // The yaml library is used here (not src/yaml's reader) because rendering needs the syntax
  // tree: whether a scalar was quoted decides if a whole tag may become a number. It is set to
  // YAML 1.1 with last-key-wins and merge keys so a patch with tags means what it means without
  // them (src/yaml reads those, as kubectl does).
  const doc = parseDocument(masked, { version: '1.1', uniqueKeys: false, merge: true });
  if (doc.errors.length > 0)
    throw new Error(`${field} is not valid YAML or JSON: ${unmask(doc.errors[0]!.message.split('\n')[0]!, spans)}`);
  visit(doc, {
    Scalar(key, node, path) {
      if (typeof node.value !== 'string' || !node.value.includes(OPEN)) return;
      const leaf = leafField(field, path, node);
      if (key === 'key')
        throw new Error(
          `${leaf}: a key may not hold a tag (${JSON.stringify(unmask(node.value, spans))}); tags are rendered in values only`,
        );
      const source = unmask(node.value, spans);
      const rendered = renderLeaf(source, leaf);
      if (!WHOLE.test(node.value) || node.type !== 'PLAIN') {
        node.value = rendered;
        return;
      }
      const value = jsonValue(rendered, leaf, source);
      if (value !== null && typeof value === 'object') return doc.createNode(value);
      node.value = value;
      return;
    },
  });
  return JSON.stringify(checkUserValue(doc.toJS({ maxAliasCount: 100 }), field));
}

/** A whole unquoted tag's value (`tag` as written): one JSON value, else plain words as a string; anything else is refused. */
function jsonValue(text: string, leaf: string, tag: string): unknown {
  let value: unknown;
  try {
    value = parseUserJson(text, `${leaf} (the value of ${tag})`);
  } catch (err) {
    if (err instanceof SyntaxError) {
      if (PLAIN_WORDS.test(text) && text.trim() === text) return text;
      throw new Error(
        `${leaf}: ${tag} stands where a JSON value goes, but its value ${JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}…` : text)} is not one JSON value (quote the tag to insert it as a string)`,
      );
    }
    throw err;
  }
  if (typeof value === 'number' && !Number.isFinite(value))
    throw new Error(`${leaf}: ${tag} gives ${JSON.stringify(text)}, a number out of range`);
  return value;
}

function unmask(text: string, spans: { raw: string }[]): string {
  return text.replace(PLACEHOLDER, (_, i: string) => spans[Number(i)]?.raw ?? '');
}

/** `<field>.containers[0].image` for a scalar at `path` (the visitor's ancestors). */
function leafField(field: string, path: readonly unknown[], node: unknown): string {
  let out = field;
  for (let k = 0; k < path.length; k++) {
    const a = path[k];
    const next = k + 1 < path.length ? path[k + 1] : node;
    if (isPair(a) && a.value === next) {
      const key = isScalar(a.key) ? String(a.key.value) : String(a.key);
      out += /^[A-Za-z_$][\w$-]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
    } else if (isSeq(a)) {
      out += `[${a.items.indexOf(next as never)}]`;
    }
  }
  return out;
}
