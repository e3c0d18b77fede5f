/**
 * Artifacts in the engine: which artifact a template's input gets, which artifacts a node's
 * outputs hold, and how a later step names them.
 *
 * A finished node's artifact is a variable like any other output (`steps.X.outputs.artifacts.Y`,
 * `tasks.X…`, `inputs.artifacts.Y`, `workflow.outputs.artifacts.G`), holding the artifact record
 * as JSON. `from: "{{steps.X.outputs.artifacts.Y}}"` is therefore rendered with the caller's
 * other arguments, and `fromExpression` evaluated there too (call-expansion.ts); binding then
 * reads the record back. Only the location travels (name, path and mode are the receiving
 * template's), so an artifact record never carries another template's path into a pod.
 *
 * Where the bytes are is not decided here: the pod's wait side uploads to the location the
 * controller planned (src/artifacts/plan.ts) and the pod observer reports what was uploaded.
 */
import { parseUserJson, type Artifact, type Arguments } from '../api/index.js';
import { errorMessage } from '../log/error-message.js';
import type { ValueSource } from './outputs.js';

/** The location fields of an artifact record; exactly one says where the bytes are. */
export const LOCATION_FIELDS = [
  'vendorAObject',
  'http',
  'raw',
  'git',
  'hdfs',
  'vendorB',
  'vendorCObject',
  'vendorDObject',
  'vendorO',
  'plugin',
] as const;

/** Fields of a record that describe the bytes, carried from producer to consumer. */
const CARRIED = [...LOCATION_FIELDS, 'archive'] as const;

export function hasLocation(a: Artifact | undefined): boolean {
  return !!a && LOCATION_FIELDS.some((f) => a[f] !== undefined);
}

/** The variable value of an artifact: its record as JSON. */
export function artifactVariable(a: Artifact): string {
  return JSON.stringify(a);
}

/** Reads an artifact record that `from` rendered to; errors name the field. */
export function parseArtifactRef(text: string, field: string): Artifact {
  let data: unknown;
  try {
    data = parseUserJson(text, field);
  } catch (err) {
    throw new Error(
      `${field}: expected a reference to an artifact such as "{{steps.NAME.outputs.artifacts.ART}}", got ${short(text)} (${errorMessage(err)})`,
    );
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data) || !hasLocation(data as Artifact))
    throw new Error(`${field}: ${short(text)} is not an artifact (it has no location)`);
  return data as Artifact;
}

/** A rendered `from` that continues after the record with `/a/path`: the record and that path. */
function splitSuffix(text: string): { text: string; suffix?: string } {
  const t = text.trim();
  if (!t.startsWith('{') || t.endsWith('}')) return { text };
  const end = t.lastIndexOf('}/');
  if (end < 0) return { text };
  const suffix = t.slice(end + 2).replace(/^\/+|\/+$/g, '');
  return suffix ? { text: t.slice(0, end + 1), suffix } : { text: t.slice(0, end + 1) };
}

/**
 * The location of a record as a canonical string (location fields only, keys sorted at every
 * level): two records name the same bytes when their keys are equal.
 */
export function locationKey(a: Artifact): string {
  const canon = (v: unknown): unknown =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.keys(v)
            .sort()
            .map((k) => [k, canon((v as Record<string, unknown>)[k])]),
        )
      : v;
  const out: Record<string, unknown> = {};
  for (const f of LOCATION_FIELDS) if (a[f] !== undefined) out[f] = canon(a[f]);
  return JSON.stringify(out);
}

/** Only the fields that say where the bytes are (and how they are packed). */
function locationOf(a: Artifact): Partial<Artifact> {
  const out: Partial<Artifact> = {};
  for (const f of CARRIED) if (a[f] !== undefined) (out as Record<string, unknown>)[f] = a[f];
  return out;
}

export type BoundArtifacts = { ok: true; artifacts: Artifact[] } | { ok: false; error: string };

/**
 * The input artifacts of a call: for each declared one, the argument of the same name (its `from`
 * record or its own location), else the declaration's own location (`raw`, `http`, …). An input
 * with neither fails the node, unless it is `optional` (then it is left out and nothing is
 * placed at its path).
 */
export function bindInputArtifacts(declared: Artifact[] | undefined, args: Arguments | undefined, where: string): BoundArtifacts {
  const out: Artifact[] = [];
  for (const d of declared ?? []) {
    const field = `${where}.inputs.artifacts[${d.name}]`;
    const arg = args?.artifacts?.find((a) => a.name === d.name);
    let source: Partial<Artifact> | undefined;
    try {
      if (arg?.from !== undefined && arg.from !== '') {
        const { text, suffix } = splitSuffix(arg.from);
        source = locationOf(parseArtifactRef(text, `${field} argument from`));
        // `{{steps.X.outputs.artifacts.Y}}/dir/file` (the peer's form): one path inside the artifact.
        if (suffix) source.subPath = suffix;
      } else if (hasLocation(arg)) source = locationOf(arg!);
      else if (hasLocation(d)) source = locationOf(d);
    } catch (err) {
      return { ok: false, error: errorMessage(err) };
    }
    if (!source) {
      if (d.optional || arg?.optional) continue;
      return {
        ok: false,
        error: `${field}: no artifact supplied (pass an argument artifact named "${d.name}" with from or a location, or mark the input optional)`,
      };
    }
    const bound: Artifact = { ...source, name: d.name };
    // The declaration's archive (zip: unzip it; none: place it as fetched) wins over how it was stored.
    for (const k of ['path', 'mode', 'recurseMode', 'optional', 'archive'] as const)
      if (d[k] !== undefined) (bound as unknown as Record<string, unknown>)[k] = d[k];
    const subPath = arg?.subPath ?? source.subPath ?? d.subPath;
    if (subPath !== undefined) bound.subPath = subPath;
    out.push(bound);
  }
  return { ok: true, artifacts: out };
}

export type CollectedArtifacts = { ok: true; artifacts: Artifact[] } | { ok: false; error: string };

/**
 * A node's output artifacts: for a pod, those its wait side reported as uploaded (by name); for
 * a plugin or http task, those its reply carried; for a steps or DAG template, those its
 * `from`/`fromExpression` name. A declared artifact that is missing fails the node unless it is
 * `optional`; a reported one that is not declared is kept when it has a location.
 *
 * `produced` (steps and DAGs) says whether a record names an artifact a node of this workflow
 * produced: `from` must pass one on, never a location written into the workflow — the server
 * downloads outputs, and must not be steered to an endpoint the workflow's author chose.
 */
export function collectOutputArtifacts(
  declared: Artifact[] | undefined,
  observed: Artifact[] | undefined,
  values: ValueSource,
  where: string,
  produced?: (a: Artifact) => boolean,
): CollectedArtifacts {
  const out: Artifact[] = [];
  for (const d of declared ?? []) {
    const field = `${where}.outputs.artifacts[${d.name}]`;
    let found: Artifact | undefined;
    try {
      if (d.from !== undefined && d.from !== '') found = parseArtifactRef(values.render(d.from, `${field}.from`), `${field}.from`);
      else if (d.fromExpression !== undefined && d.fromExpression !== '')
        found = parseArtifactRef(values.evaluate(d.fromExpression, `${field}.fromExpression`), `${field}.fromExpression`);
      else found = observed?.find((a) => a.name === d.name);
    } catch (err) {
      if (!d.optional) return { ok: false, error: errorMessage(err) };
    }
    if (!found) {
      if (d.optional) continue;
      return { ok: false, error: `${field}: the step produced no such artifact` };
    }
    if (produced && (d.from || d.fromExpression) && !produced(found))
      return {
        ok: false,
        error: `${field}: ${d.from ? 'from' : 'fromExpression'} names a location no step of this workflow produced; an output passes on an artifact a step made, e.g. "{{steps.NAME.outputs.artifacts.ART}}"`,
      };
    const record: Artifact = { ...locationOf(found), name: d.name };
    if (d.path !== undefined) record.path = d.path;
    if (d.globalName) record.globalName = d.globalName;
    if (d.artifactGC?.strategy) record.artifactGC = { strategy: d.artifactGC.strategy }; // artifact-gc.ts reads it
    out.push(record);
  }
  // Reported but not declared: a pod's main-logs (archiveLogs), the artifacts of a plugin's reply.
  // Recorded as they are when they say where they are, so later steps can take them with from.
  for (const a of observed ?? []) if (hasLocation(a) && !out.some((o) => o.name === a.name)) out.push(a);
  return { ok: true, artifacts: out };
}

/**
 * `from` of argument artifacts with `fromExpression` evaluated: the expression's value is the
 * referenced artifact's record (as JSON), so binding reads both the same way.
 */
export function resolveFromExpressions(args: Arguments, values: ValueSource, where: string): Arguments {
  if (!args.artifacts?.some((a) => a.fromExpression)) return args;
  return {
    ...args,
    artifacts: args.artifacts.map((a, i) => {
      if (!a.fromExpression) return a;
      const { fromExpression, ...rest } = a;
      return { ...rest, from: values.evaluate(fromExpression, `${where}.arguments.artifacts[${i}].fromExpression`) };
    }),
  };
}

function short(text: string): string {
  return JSON.stringify(text.length > 120 ? `${text.slice(0, 120)}…` : text);
}
