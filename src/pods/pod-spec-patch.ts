/**
 * `podSpecPatch` (workflow and template): a partial pod spec, as YAML or JSON, merged into the
 * generated spec. The merge is the subset of Kubernetes' strategic merge patch that pod specs
 * need, implemented here so the pod builder stays pure:
 *   - objects merge key by key, recursively; a `null` value removes the key;
 *   - lists whose elements have an identity merge element by element on that key (containers,
 *     initContainers, ephemeralContainers, volumes, env, imagePullSecrets, resource claims by
 *     `name`; volumeMounts by `mountPath`; volumeDevices by `devicePath`; ports by
 *     `containerPort`; hostAliases by `ip`); an element with `$patch: delete` removes the match;
 *     unmatched elements are appended;
 *   - every other list (args, command, tolerations, ...) is replaced as a whole.
 * Not supported: `$patch: replace`, `$setElementOrder`, `$retainKeys`, `$deleteFromPrimitiveList`.
 */
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
  volumeMounts: 'mountPath',
  volumeDevices: 'devicePath',
  ports: 'containerPort',
  hostAliases: 'ip',
};

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Parses a podSpecPatch text; `where` names its origin in errors (e.g. `template "x" podSpecPatch`). */
export function parsePodSpecPatch(text: string, where: string): JsonObject {
  let value: unknown;
  try {
    value = readYamlDocument(text, where);
  } catch (err) {
    throw new Error(`${where} is not valid YAML or JSON: ${err instanceof YamlReadError ? err.detail : err instanceof Error ? err.message.split('\n')[0] : String(err)}`);
  }
  if (!isObject(value)) throw new Error(`${where} must be an object (a partial pod spec), got ${JSON.stringify(value)?.slice(0, 80)}`);
  return value;
}

/** Returns `target` with `patch` merged in (see the module comment); the inputs are not changed. */
export function mergePodSpecPatch<T extends object>(target: T, patch: JsonObject): T {
  return mergeObject(structuredClone(target) as unknown as JsonObject, patch) as unknown as T;
}

function mergeObject(target: JsonObject, patch: JsonObject): JsonObject {
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) {
      delete target[key];
    } else if (isObject(value) && isObject(target[key])) {
      target[key] = mergeObject(target[key] as JsonObject, value);
    } else if (Array.isArray(value) && MERGE_KEYS[key] && Array.isArray(target[key])) {
      target[key] = mergeList(target[key] as Json[], value, MERGE_KEYS[key]);
    } else {
      target[key] = stripDirectives(structuredClone(value));
    }
  }
  return target;
}

function mergeList(target: Json[], patch: Json[], mergeKey: string): Json[] {
  const out = [...target];
  for (const item of patch) {
    if (!isObject(item) || item[mergeKey] === undefined) {
      out.push(stripDirectives(structuredClone(item)));
      continue;
    }
    const at = out.findIndex((t) => isObject(t) && t[mergeKey] === item[mergeKey]);
    if (item.$patch === 'delete') {
      if (at >= 0) out.splice(at, 1);
    } else if (at >= 0) {
      out[at] = mergeObject(out[at] as JsonObject, item);
    } else {
      out.push(stripDirectives(structuredClone(item)));
    }
  }
  return out;
}

function stripDirectives(value: Json): Json {
  if (Array.isArray(value)) return value.filter((v) => !(isObject(v) && v.$patch === 'delete')).map(stripDirectives);
  if (isObject(value)) {
    const out: JsonObject = {};
    for (const [k, v] of Object.entries(value)) if (k !== '$patch' && v !== null) out[k] = stripDirectives(v);
    return out;
  }
  return value;
}
