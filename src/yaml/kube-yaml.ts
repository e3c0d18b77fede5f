/**
 * The one reader of user-supplied YAML (workflows, templates, bindings, plugin.yaml, the
 * ConfigMaps discovery reads, podSpecPatch text): every document kubectl accepts is accepted
 * here with the same JSON meaning, so a file that works with `kubectl create -f` works with
 * `plugflow submit`, and a value means the same to our tools as to the API server.
 *
 * kubectl reads YAML through sigs.k8s.io/yaml (go-yaml v2). What that means, and how it is had:
 * - Syntax: js-yaml 4, the parser of the Kubernetes JavaScript client. Unlike the `yaml` package
 *   (and js-yaml 5) it accepts, as libyaml does, a quoted scalar that spans lines inside a flow
 *   sequence and is closed at the key's indentation (`args: ["` … `"]`), which many published
 *   workflows use.
 * - Plain scalars: go-yaml v2's resolver (go-scalars.ts): `yes`/`no`/`on`/`off`/`y`/`n` are
 *   booleans, `0755` is 493, timestamps stay strings; quoted scalars are strings.
 * - A key given twice: the last value wins (go-yaml v2 without strict mode), or, with
 *   `uniqueKeys`, is an error naming the line, as in the strict reading the peer gives files that
 *   are not Kubernetes objects (plugin.yaml, a plugin ConfigMap's container).
 * - `<<` merge keys: applied in the order written, a later one overriding earlier keys, and in a
 *   list of maps the earlier map winning — go-yaml's order, not js-yaml's own.
 * - Anchors and aliases: every alias is expanded into its own copy (no shared objects reach
 *   callers), under go-yaml's bound on the share of aliased values ("excessive aliasing"), so a
 *   billion-laughs document fails after a few thousand values instead of exhausting memory.
 * - Non-string map keys become strings as sigs.k8s.io/yaml spells them (`on:` is "true", `1e6:`
 *   is "1e+06"); unknown tags (`!Ref x`) are ignored; `!!binary` decodes to text.
 * - What JSON cannot hold is refused as kubectl refuses it (`.inf`, `.nan` as values); integers
 *   beyond ±2^53 are refused too (JavaScript numbers would silently change them).
 * Known differences (test/yaml-corpus and the peer's 217 example workflows read the same as in
 * kubectl): a key written both before and after a merge key in one mapping keeps the merged
 * value (kubectl: the last written); a few forms kubectl's document splitter refuses are
 * accepted (content on a `---` line, a `%YAML` directive, a null map key, read as "null").
 */
import jsyaml from 'js-yaml';
import { goFloatKey, resolvePlain } from './go-scalars.js';

/** Deepest nesting accepted, counting values reached through aliases. */
export const MAX_YAML_DEPTH = 1000;

/** A YAML text that cannot be read; names the source and, when known, the line. */
export class YamlReadError extends Error {
  readonly code = 'YAML_READ';
  constructor(
    readonly source: string,
    readonly reason: string,
    readonly line?: number,
    readonly column?: number,
  ) {
    super(`${source}: ${describeAt(reason, line, column)}`);
    this.name = 'YamlReadError';
  }

  /** The message without the source: `line 3, column 5: reason`. */
  get detail(): string {
    return describeAt(this.reason, this.line, this.column);
  }
}

function describeAt(reason: string, line?: number, column?: number): string {
  return `${line !== undefined ? `line ${line}${column !== undefined ? `, column ${column}` : ''}: ` : ''}${reason}`;
}

/** A float as go-yaml holds it; a class so that js-yaml spells it Go's way when it is a map key. */
class GoFloat {
  constructor(
    readonly v: number,
    readonly line: number,
  ) {}
  get [Symbol.toStringTag](): string {
    return 'GoFloat';
  }
  toString(): string {
    return goFloatKey(this.v);
  }
}

/** Per-load state the types below need (loads are synchronous, so one at a time). */
interface LoadContext {
  /** 1-based line of the node being read, from js-yaml's listener: for error messages. */
  line: number;
  /** Merge keys become unique private keys, so that order and repeats survive js-yaml. */
  mergePrefix: string;
  merges: number;
  /** Told of each plain scalar read as a boolean (its text and line): see bool-keys.ts. */
  onBoolean?: (text: string, line: number, value: boolean) => void;
}
let current: LoadContext | undefined;
const ctx = (): LoadContext => current!;

class ValueError extends Error {
  constructor(
    readonly reason: string,
    readonly line?: number,
  ) {
    super(reason);
  }
}

const resolvesTo = (t: string) => (data: unknown) => typeof data === 'string' && resolvePlain(data).t === t;

const goNull = new jsyaml.Type('tag:yaml.org,2002:null', {
  kind: 'scalar',
  resolve: (data: unknown) => data === null || resolvesTo('null')(data),
  construct: () => null,
});
const goBool = new jsyaml.Type('tag:yaml.org,2002:bool', {
  kind: 'scalar',
  resolve: resolvesTo('bool'),
  construct: (data: string) => {
    const v = (resolvePlain(data) as { v: boolean }).v;
    ctx().onBoolean?.(data, ctx().line, v);
    return v;
  },
});
const goInt = new jsyaml.Type('tag:yaml.org,2002:int', {
  kind: 'scalar',
  resolve: resolvesTo('int'),
  construct: (data: string) => {
    const v = (resolvePlain(data) as { v: bigint }).v;
    if (v > BigInt(Number.MAX_SAFE_INTEGER) || v < BigInt(Number.MIN_SAFE_INTEGER)) {
      throw new ValueError(
        `the integer ${data} is beyond ±2^53, which plugflow cannot keep exactly; quote it to keep it as text`,
        ctx().line,
      );
    }
    return Number(v);
  },
});
const goFloat = new jsyaml.Type('tag:yaml.org,2002:float', {
  kind: 'scalar',
  resolve: (data: unknown) => resolvesTo('float')(data) || resolvesTo('int')(data),
  construct: (data: string) => {
    const r = resolvePlain(data);
    return new GoFloat(r.t === 'float' ? r.v : Number((r as { v: bigint }).v), ctx().line);
  },
});
const mergeKey = new jsyaml.Type('tag:plugflow.io,2026:merge-key', {
  kind: 'scalar',
  resolve: (data: unknown) => data === '<<',
  construct: () => `${ctx().mergePrefix}${ctx().merges++}`,
});
const binary = new jsyaml.Type('tag:yaml.org,2002:binary', {
  kind: 'scalar',
  resolve: (data: unknown) => typeof data === 'string',
  // atob and TextDecoder, not Buffer: the same reader runs in the web UI. Data that is not base64
  // is refused, as go-yaml refuses it.
  construct: (data: string) => {
    let bytes: string;
    try {
      bytes = atob(data.replace(/\s+/g, ''));
    } catch {
      throw new ValueError('a !!binary value is not base64', ctx().line);
    }
    return new TextDecoder().decode(Uint8Array.from(bytes, (c) => c.charCodeAt(0)));
  },
});
/** go-yaml ignores tags it does not know: the node keeps its plain meaning. */
const ignoredTags = ['!', 'tag:'].flatMap((prefix) =>
  (['scalar', 'sequence', 'mapping'] as const).map(
    (kind) => new jsyaml.Type(prefix, { kind, multi: true, construct: (data: unknown) => data }),
  ),
);

const SCHEMA = jsyaml.FAILSAFE_SCHEMA.extend({ implicit: [goNull, goBool, goInt, goFloat, mergeKey], explicit: [binary, ...ignoredTags] });

export interface ReadYamlOptions {
  /** Refuse a key given twice in one mapping (default: the last value wins, as in kubectl). */
  uniqueKeys?: boolean;
  /** Told of each plain scalar read as a boolean (`yes`, `n`, `on`, …), with its line. */
  onBoolean?: (text: string, line: number, value: boolean) => void;
}

/** Reads every non-empty document of a YAML (or JSON) text, as kubectl would read it. */
export function readYamlDocuments(text: string, source: string, options: ReadYamlOptions = {}): unknown[] {
  // globalThis.crypto (not node:crypto): the web UI reads YAML with this reader too.
  const context: LoadContext = {
    line: 1,
    mergePrefix: `\u0000<<${globalThis.crypto.randomUUID()}#`,
    merges: 0,
    ...(options.onBoolean ? { onBoolean: options.onBoolean } : {}),
  };
  let raw: unknown[];
  current = context;
  try {
    raw = jsyaml.loadAll(text, null, {
      schema: SCHEMA,
      json: !options.uniqueKeys,
      filename: source,
      listener: (event: string, state: { line: number }) => {
        if (event === 'open') context.line = state.line + 1;
      },
      maxDepth: MAX_YAML_DEPTH,
      // Merges are applied below, under the alias bound; js-yaml's own merging is not used.
      maxTotalMergeKeys: -1,
    } as jsyaml.LoadOptions);
  } catch (err) {
    throw asReadError(err, source);
  } finally {
    current = undefined;
  }
  const out: unknown[] = [];
  for (const doc of raw) {
    if (doc === null || doc === undefined) continue;
    try {
      out.push(new Expander(context.mergePrefix).value(doc, false, 0));
    } catch (err) {
      throw asReadError(err, source);
    }
  }
  return out;
}

/**
 * Reads a text that must hold exactly one document; `undefined` when it holds none. Several
 * documents are refused, `what` naming what the text should hold.
 */
export function readYamlDocument(text: string, source: string, options: ReadYamlOptions & { what?: string } = {}): unknown {
  const docs = readYamlDocuments(text, source, options);
  if (docs.length > 1) {
    throw new YamlReadError(
      source,
      `holds ${docs.length} YAML documents (separated by ---) where ${options.what ?? 'one document'} is expected; keep one document`,
    );
  }
  return docs[0];
}

function asReadError(err: unknown, source: string): YamlReadError {
  if (err instanceof YamlReadError) return err;
  if (err instanceof ValueError) return new YamlReadError(source, err.reason, err.line);
  if (err instanceof jsyaml.YAMLException) {
    const mark = (err as { mark?: { line: number; column: number } }).mark;
    return new YamlReadError(source, err.reason ?? err.message, mark ? mark.line + 1 : undefined, mark ? mark.column + 1 : undefined);
  }
  if (err instanceof RangeError) return new YamlReadError(source, `nesting is too deep to read (${err.message})`);
  throw err;
}

/**
 * Turns js-yaml's result into plain JSON values: copies aliased values (js-yaml shares them),
 * applies merge keys in go-yaml's order and counts values as go-yaml's decoder does, failing on
 * excessive aliasing by go-yaml's own rule.
 */
class Expander {
  private decodes = 0;
  private aliases = 0;
  private readonly seen = new WeakSet<object>();

  constructor(private readonly mergePrefix: string) {}

  value(v: unknown, aliased: boolean, depth: number): unknown {
    this.count(aliased);
    if (depth > MAX_YAML_DEPTH) throw new ValueError(`values are nested more than ${MAX_YAML_DEPTH} levels deep (counting aliases)`);
    if (v instanceof GoFloat) {
      if (!Number.isFinite(v.v)) {
        throw new ValueError(
          `${goFloatKey(v.v)} is not a number JSON can hold (kubectl refuses it too); quote it to keep it as text`,
          v.line,
        );
      }
      return v.v;
    }
    if (typeof v === 'string' && v.startsWith(this.mergePrefix)) return '<<'; // `<<` as a plain value
    if (v === null || typeof v !== 'object') return v;
    const inAlias = aliased || this.seen.has(v);
    this.seen.add(v);
    if (Array.isArray(v)) return v.map((item) => this.value(item, inAlias, depth + 1));
    const out: Record<string, unknown> = {};
    this.mapping(v as Record<string, unknown>, out, inAlias, depth);
    return out;
  }

  /** Decodes a mapping into `out` (which may already hold keys, when merging). */
  private mapping(src: Record<string, unknown>, out: Record<string, unknown>, aliased: boolean, depth: number): void {
    for (const key of Object.keys(src)) {
      const v = src[key];
      if (key.startsWith(this.mergePrefix)) {
        this.merge(v, out, aliased, depth);
        continue;
      }
      this.count(aliased); // the key
      setOwn(out, key, this.value(v, aliased, depth + 1));
    }
  }

  private merge(v: unknown, out: Record<string, unknown>, aliased: boolean, depth: number): void {
    const wantMap = 'a merge key (<<) needs a map or a list of maps as its value';
    if (Array.isArray(v)) {
      // go-yaml: earlier maps in the list win, so apply them last.
      for (let i = v.length - 1; i >= 0; i--) {
        const item = v[i];
        if (!isMap(item)) throw new ValueError(wantMap);
        this.mergeOne(item, out, aliased, depth);
      }
    } else if (isMap(v)) {
      this.mergeOne(v, out, aliased, depth);
    } else {
      throw new ValueError(wantMap);
    }
  }

  private mergeOne(m: Record<string, unknown>, out: Record<string, unknown>, aliased: boolean, depth: number): void {
    this.count(aliased);
    const inAlias = aliased || this.seen.has(m);
    this.seen.add(m);
    this.mapping(m, out, inAlias, depth + 1);
  }

  /** go-yaml's rule: over 100 aliased values among over 1000, the aliased share is capped. */
  private count(aliased: boolean): void {
    this.decodes++;
    if (aliased) this.aliases++;
    if (this.aliases > 100 && this.decodes > 1000 && this.aliases / this.decodes > allowedAliasRatio(this.decodes)) {
      throw new ValueError(`the document contains excessive aliasing (${this.aliases} of ${this.decodes} values come from aliases)`);
    }
  }
}

function allowedAliasRatio(decodes: number): number {
  const low = 400_000;
  const high = 4_000_000;
  if (decodes <= low) return 0.99;
  if (decodes >= high) return 0.1;
  return 0.99 - 0.89 * ((decodes - low) / (high - low));
}

function isMap(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof GoFloat);
}

/** Sets an own property, including `__proto__`, without touching any prototype. */
function setOwn(o: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(o, key, { value, enumerable: true, writable: true, configurable: true });
  else o[key] = value;
}
