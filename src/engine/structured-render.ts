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
import { checkUserValue, parseUserJson } from '../api/index.js';
import { compileTemplate } from '../expr/index.js';
import { readYamlDocument, YamlReadError } from '../yaml/kube-yaml.js';

const OPEN = '\uE000';
const CLOSE = '\uE001';
const PLACEHOLDER = /\uE000(\d+)\uE001/g;
const WHOLE = /^\uE000(\d+)\uE001$/;
/** Text a whole unquoted tag may give as a plain string when it is not JSON: no structure characters. */
const PLAIN_WORDS = /^[^,:#"'[\]{}\n\r\t\\]*$/;
/** What may stand before a plain scalar that is a whole value: a mapping value, a list entry, a flow item. */
const VALUE_LEAD = new Set([':', '-', '[', ',', '?']);

/**
 * Renders the tags of `text` (a YAML or JSON document) in its string leaves with `renderLeaf`,
 * which gets the leaf's text with its tags and the leaf's field (`<field>.containers[0].image`).
 * Text without tags is returned as it is. Errors name `field`.
 *
 * The masked text is read by src/yaml's reader, the one reader of user YAML, so a patch with
 * tags means what it means without them (and what it means to kubectl). Whether a whole tag was
 * written quoted is read from the text around its placeholder, which is unique: a quote right
 * before it means quoted; a `:`, `-`, `[`, `,` or `?` before it (across blanks) means a plain
 * value; anything else (a block scalar) is text.
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

  let doc: unknown;
  try {
    doc = readYamlDocument(masked, field);
  } catch (err) {
    const why = err instanceof YamlReadError ? err.detail : err instanceof Error ? err.message.split('\n')[0]! : String(err);
    throw new Error(`${field} is not valid YAML or JSON: ${unmask(why, spans)}`);
  }
  const render = (value: unknown, leaf: string): unknown => {
    if (typeof value === 'string') {
      if (!value.includes(OPEN)) return value;
      const source = unmask(value, spans);
      const rendered = renderLeaf(source, leaf);
      const whole = WHOLE.exec(value);
      return whole && isPlainValue(masked, value) ? jsonValue(rendered, leaf, source) : rendered;
    }
    if (Array.isArray(value)) return value.map((v, i) => render(v, `${leaf}[${i}]`));
    if (value !== null && typeof value === 'object') {
      const out: Record<string, unknown> = {};
      for (const [key, v] of Object.entries(value)) {
        const child = /^[A-Za-z_$][\w$-]*$/.test(key) ? `${leaf}.${key}` : `${leaf}[${JSON.stringify(key)}]`;
        if (key.includes(OPEN))
          throw new Error(`${child}: a key may not hold a tag (${JSON.stringify(unmask(key, spans))}); tags are rendered in values only`);
        Object.defineProperty(out, key, { value: render(v, child), enumerable: true, writable: true, configurable: true });
      }
      return out;
    }
    return value;
  };
  return JSON.stringify(checkUserValue(render(doc, field), field));
}

/** Whether the placeholder `ph` (unique in `masked`) was written as a plain scalar, not quoted nor a block. */
function isPlainValue(masked: string, ph: string): boolean {
  const at = masked.indexOf(ph);
  const before = masked[at - 1];
  if (before === '"' || before === "'") return false;
  let i = at - 1;
  while (i >= 0 && (masked[i] === ' ' || masked[i] === '\t')) i--;
  if (i < 0) return false;
  if (masked[i] !== '\n' && masked[i] !== '\r') return VALUE_LEAD.has(masked[i]!);
  // On a line of its own: a block scalar's header (`|`, `>-`, `|2+`) makes it text.
  while (i >= 0 && /\s/.test(masked[i]!)) i--;
  let j = i;
  while (j >= 0 && /[-+0-9]/.test(masked[j]!)) j--;
  if (j >= 0 && (masked[j] === '|' || masked[j] === '>')) return false;
  return i >= 0 && VALUE_LEAD.has(masked[i]!);
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
