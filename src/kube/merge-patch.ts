/**
 * The smallest JSON merge patch (RFC 7386) that turns one JSON value into another. Writing only
 * what changed keeps status writes small and lets a write that changes nothing be skipped
 * altogether. Arrays are replaced whole (merge patch cannot address array elements); removed
 * object keys become `null`. Pure. Status holds user JSON (plugin outputs), so properties are
 * read as own ones only and written with setOwn (src/api/user-json.ts).
 */
import { getOwn, isJsonObject as isObject, jsonEqual, setOwn } from '../api/index.js';

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/**
 * A merge patch taking `from` to `to`, or `undefined` when they are equal. Both must be objects
 * (a merge patch of a non-object replaces it whole).
 */
export function mergePatchDiff(from: Record<string, unknown> | undefined, to: Record<string, unknown>): Record<string, Json> | undefined {
  const patch: Record<string, Json> = {};
  const before = from ?? {};
  for (const [k, v] of Object.entries(to)) {
    if (v === undefined) continue;
    const old = getOwn(before, k);
    if (jsonEqual(old, v)) continue;
    if (isObject(v) && isObject(old)) {
      const sub = mergePatchDiff(old, v);
      if (sub) setOwn(patch, k, sub);
    } else {
      setOwn(patch, k, stripUndefined(v));
    }
  }
  for (const [k, v] of Object.entries(before)) {
    if (v !== undefined && getOwn(to, k) === undefined) setOwn(patch, k, null);
  }
  return Object.keys(patch).length ? patch : undefined;
}

/** Applies a merge patch to a value (used to predict the object after a write, and in tests). */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return patch;
  const out: Record<string, unknown> = isObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else setOwn(out, k, applyMergePatch(getOwn(out, k), v));
  }
  return out;
}

function stripUndefined(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(stripUndefined);
  if (isObject(v)) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) if (x !== undefined) setOwn(out, k, stripUndefined(x));
    return out;
  }
  return v;
}
