/**
 * `podSpecPatch` (workflow and template): a partial pod spec, as YAML or JSON, merged into the
 * generated spec. The merge is the subset of Kubernetes' strategic merge patch that pod specs
 * need, implemented here so the pod builder stays pure:
 *   - objects merge key by key, recursively; a `null` value removes the key;
 *   - lists whose elements have an identity merge element by element on that key (containers,
 *     initContainers, ephemeralContainers, volumes, env, imagePullSecrets, resource claims (the
 *     pod's and a container's) by `name`; volumeMounts by `mountPath`; volumeDevices by
 *     `devicePath`; ports by `containerPort`; hostAliases by `ip`); an element with
 *     `$patch: delete` removes the match; unmatched elements are appended;
 *   - every other list (args, command, tolerations, ...) is replaced as a whole.
 * Not supported: `$patch: replace`, `$setElementOrder`, `$retainKeys`, `$deleteFromPrimitiveList`.
 *
 * The patch is user JSON (src/api/user-json.ts): a `__proto__` key is refused when parsed, and
 * the merge reads own properties only and writes with setOwn, so it never follows or replaces a
 * prototype (issue 10: a patch descending into `__proto__` once made every later pod privileged).
 */
import { checkUserValue, copyUserJson, getOwn, isJsonObject, setOwn } from '../api/index.js';
import { readYamlDocument, YamlReadError } from '../yaml/kube-yaml.js';

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type JsonObject = { [k: string]: Json };

const MERGE_KEYS: Readonly<Record<string, string>> = {
  containers: 'name',
  initContainers: 'name',
  ephemeralContainers: 'name',
  volumes: 'name',
  env: 'name',
  imagePullSecrets: 'name',
  claims: 'name',
  resourceClaims: 'name',
  volumeMounts: 'mountPath',
  volumeDevices: 'devicePath',
  ports: 'containerPort',
  hostAliases: 'ip',
};

const isObject = isJsonObject as (v: unknown) => v is JsonObject;

/** Parses a podSpecPatch text; `where` names its origin in errors (e.g. `template "x" podSpecPatch`). */
export function parsePodSpecPatch(text: string, where: string): JsonObject {
  let value: unknown;
  try {
    value = readYamlDocument(text, where);
  } catch (err) {
    throw new Error(
      `${where} is not valid YAML or JSON: ${err instanceof YamlReadError ? err.detail : err instanceof Error ? err.message.split('\n')[0] : String(err)}`,
    );
  }
  if (!isObject(value)) throw new Error(`${where} must be an object (a partial pod spec), got ${JSON.stringify(value)?.slice(0, 80)}`);
  return checkUserValue(value, where);
}

/** Returns `target` with `patch` merged in (see the module comment); the inputs are not changed. */
export function mergePodSpecPatch<T extends object>(target: T, patch: JsonObject): T {
  return mergeObject(copyUserJson(target) as unknown as JsonObject, patch) as unknown as T;
}

function mergeObject(target: JsonObject, patch: JsonObject): JsonObject {
  for (const [key, value] of Object.entries(patch)) {
    const current = getOwn(target, key) as Json | undefined;
    const mergeKey = getOwn(MERGE_KEYS, key) as string | undefined;
    if (value === null) {
      delete target[key];
    } else if (isObject(value) && isObject(current)) {
      setOwn(target, key, mergeObject(current, value));
    } else if (Array.isArray(value) && mergeKey && Array.isArray(current)) {
      setOwn(target, key, mergeList(current, value, mergeKey));
    } else {
      setOwn(target, key, stripDirectives(value));
    }
  }
  return target;
}

function mergeList(target: Json[], patch: Json[], mergeKey: string): Json[] {
  const out = [...target];
  for (const item of patch) {
    const id = isObject(item) ? getOwn(item, mergeKey) : undefined;
    if (!isObject(item) || id === undefined) {
      out.push(stripDirectives(item));
      continue;
    }
    const at = out.findIndex((t) => isObject(t) && getOwn(t, mergeKey) === id);
    if (getOwn(item, '$patch') === 'delete') {
      if (at >= 0) out.splice(at, 1);
    } else if (at >= 0) {
      out[at] = mergeObject(out[at] as JsonObject, item);
    } else {
      out.push(stripDirectives(item));
    }
  }
  return out;
}

/** A copy of `value` without `$patch` directives and null fields (what the patch adds). */
function stripDirectives(value: Json): Json {
  if (Array.isArray(value)) return value.filter((v) => !(isObject(v) && getOwn(v, '$patch') === 'delete')).map(stripDirectives);
  if (isObject(value)) {
    const out: JsonObject = {};
    for (const [k, v] of Object.entries(value)) if (k !== '$patch' && v !== null) setOwn(out, k, stripDirectives(v));
    return out;
  }
  return value;
}
