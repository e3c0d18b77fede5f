/**
 * Map keys YAML 1.1 reads as booleans. kubectl reads `n:`, `y:`, `on:`, `no:`, … as the booleans
 * they are in YAML 1.1, and a boolean map key becomes the string "false" or "true" — so
 * `withItems: [{n: 1}]` gives items with a key "false", and `{{item.n}}` then "cannot resolve".
 * plugflow reads files exactly as kubectl does (kube-yaml.ts), so the meaning stays; this only
 * finds such keys so that `plugflow submit`, `plugflow lint` and the UI can say so, naming the
 * line and what the key became.
 */
import { readYamlDocuments } from './kube-yaml.js';

export interface BooleanKey {
  line: number;
  /** The key as written. */
  key: string;
  /** What it became: "true" or "false". */
  becomes: string;
  message: string;
}

/** The words kubectl reads as booleans besides true/false themselves (which are meant as such). */
const CANONICAL = new Set(['true', 'false', 'True', 'False', 'TRUE', 'FALSE']);

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The boolean keys of a YAML text (empty when it does not parse: the reader's error says why).
 * A scalar read as a boolean is a key when its line shows it followed by `:`.
 */
export function booleanKeys(text: string, source = 'the text'): BooleanKey[] {
  const lines = text.split('\n');
  const out: BooleanKey[] = [];
  const seen = new Set<string>();
  try {
    readYamlDocuments(text, source, {
      onBoolean: (word, line, value) => {
        if (CANONICAL.has(word)) return;
        const at = lines[line - 1] ?? '';
        if (!new RegExp(`(^|[\\s{,?-])${escape(word)}\\s*:(\\s|$)`).test(at)) return;
        const id = `${line}\u0000${word}`;
        if (seen.has(id)) return;
        seen.add(id);
        const becomes = String(value);
        out.push({
          line,
          key: word,
          becomes,
          message: `line ${line}: the key ${word} is a YAML 1.1 boolean, as kubectl reads it, so it becomes "${becomes}"; quote it ("${word}") to keep the name`,
        });
      },
    });
  } catch {
    return [];
  }
  return out;
}
