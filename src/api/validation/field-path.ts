/**
 * Field paths for error messages, in the form users see in their YAML:
 * `spec.templates[2].plugin`, `metadata.labels["app.kubernetes.io/name"]`.
 *
 * A path is an immutable value; validators pass it down and extend it, so every message names the
 * exact field without string juggling at each call site.
 */

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$-]*$/;

export class FieldPath {
  private constructor(private readonly text: string) {}

  /** A path starting at `root` (e.g. `spec`), or the empty path. */
  static of(root = ''): FieldPath {
    return new FieldPath(root);
  }

  /** `parent.name` (a record field). */
  child(name: string): FieldPath {
    if (!IDENTIFIER.test(name)) return this.key(name);
    return new FieldPath(this.text === '' ? name : `${this.text}.${name}`);
  }

  /** `parent[3]` (a list element). */
  index(i: number): FieldPath {
    return new FieldPath(`${this.text}[${i}]`);
  }

  /** `parent["some/key"]` (a map entry whose key is data, not a field name). */
  key(k: string): FieldPath {
    return new FieldPath(`${this.text}[${JSON.stringify(k)}]`);
  }

  isEmpty(): boolean {
    return this.text === '';
  }

  toString(): string {
    return this.text === '' ? '<root>' : this.text;
  }
}

/** Accepts a FieldPath or an already written path string. */
export type FieldRef = FieldPath | string;

export function fieldText(field: FieldRef): string {
  return typeof field === 'string' ? field : field.toString();
}
