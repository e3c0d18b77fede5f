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
 *   3. a tag that is a whole unquoted value (`cpu: {{inputs.parameters.n}}`) yields a number or
 *      boolean when the value reads as one, as the peer's textual substitution would; otherwise
 *      (and always when quoted) a string. Never a list, a map or null;
 *   4. tags in keys are refused: a key is structure.
 * The result is the document as compact JSON (valid YAML too), checked for `__proto__` keys.
 */
import { isPair, isScalar, isSeq, parseDocument, visit } from 'yaml';
import { checkUserValue } from '../api/index.js';
import { compileTemplate } from '../expr/index.js';

const OPEN = '\uE000';
const CLOSE = '\uE001';
const PLACEHOLDER = /\uE000(\d+)\uE001/g;
const WHOLE = /^\uE000(\d+)\uE001$/;
const NUMBER = /^-?(0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)?$/;

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
      node.value = WHOLE.test(node.value) && node.type === 'PLAIN' ? plainScalar(rendered) : rendered;
    },
  });
  return JSON.stringify(checkUserValue(doc.toJS({ maxAliasCount: 100 }), field));
}

/** A whole unquoted tag's value: a number or boolean when it reads as one, else the string. */
function plainScalar(text: string): string | number | boolean {
  if (text === 'true' || text === 'false') return text === 'true';
  if (NUMBER.test(text) && Number.isFinite(Number(text))) return Number(text);
  return text;
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
