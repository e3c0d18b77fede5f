/**
 * What a plugin may put into the TaskSet status. Every `node` a plugin replies is checked
 * against the contract (spec document 001 "Request and reply") and rebuilt from the checked
 * fields only, so nothing the agent writes can be refused by the API server because of what a
 * plugin sent (a refused patch would lose the result and leave the task hanging).
 *
 * The contract, as checked here (`FieldPath`/`Issues` and the value parsers of src/api):
 *
 * | field | rule |
 * |---|---|
 * | `node` | an object (`null`/absent means "not mine": handled by the RPC client) |
 * | `node.phase` | required; one of Pending, Running, Succeeded, Failed, Error |
 * | `node.message` | a string (null = none); longer than MAX_MESSAGE_LENGTH → truncated with a marker |
 * | `node.progress` | `N/M` with 0 ≤ N ≤ M and M ≥ 1 (null or `""` = none) |
 * | `node.outputs` | an object (null = none) with, each optional: |
 * | `  .parameters` | a list of `{name: non-empty string, value: AnyString}`; value may be absent; kept: name and value as a string |
 * | `  .artifacts` | a list of objects with a non-empty string `name`, nested at most MAX_ARTIFACT_DEPTH levels; kept as sent |
 * | `  .result`, `.exitCode` | strings |
 * | | other keys of `node` and `node.outputs` are dropped |
 * | `node.outputs` as JSON | at most MAX_OUTPUTS_BYTES |
 * | `requeue` | a Go duration string (`30s`, `2m`, `1h30m`, `500ms`); null or `""` = none |
 *
 * A reply that breaks a rule ends the task **Failed** (the spec: "all other errors are fatal;
 * fatal errors make steps fail"; COMPAT.md: invalid durations and unreadable replies are fatal),
 * with a message naming every problem: `plugin hello replied with an invalid result:
 * node.outputs must be an object, got a list`. Error stays for the agent's own trouble.
 *
 * A Failed/Error result always carries a message that says something: a blank one becomes
 * `plugin hello reported Failed without a message`, one under MIN_MESSAGE_LENGTH visible
 * characters gets its origin in front: `plugin hello reported Failed: oops`.
 *
 * Sizes (so that a TaskSet status stays far below the API server's limit of about 1.5 MiB per
 * object, and each status patch below its 3 MiB request limit, with many tasks):
 * - a reply body over MAX_REPLY_BYTES (1 MiB) is not read: the task Fails naming the limit;
 * - a message is cut to MAX_MESSAGE_LENGTH (4096) characters, ending in a visible marker;
 * - outputs over MAX_OUTPUTS_BYTES (128 KiB as JSON) Fail the task naming the limit (outputs
 *   cannot be cut without changing their meaning; large data belongs in artifacts);
 * - a status patch carries at most MAX_PATCH_BYTES (see status-batcher.ts).
 */
import {
  anyStringToString,
  FieldPath,
  Issues,
  isAnyString,
  parseGoDuration,
  type NodePhase,
  type NodeResult,
  type Outputs,
  type Parameter,
} from '../api/index.js';
import { getOwn, isJsonObject } from '../api/index.js';

/** Largest plugin reply body read. */
export const MAX_REPLY_BYTES = 1024 * 1024;
/** Longest message written into the TaskSet status (UTF-16 code units, marker included). */
export const MAX_MESSAGE_LENGTH = 4096;
/** Largest `outputs` of one task result, serialised as JSON (UTF-8 bytes). */
export const MAX_OUTPUTS_BYTES = 128 * 1024;
/** Deepest nesting inside one output artifact (the Artifact record itself needs about 4). */
export const MAX_ARTIFACT_DEPTH = 32;
/** A Failed/Error message shorter than this (trimmed) gets its origin in front. */
export const MIN_MESSAGE_LENGTH = 8;
/** Problems named in one message; the rest are counted. */
const MAX_PROBLEMS = 5;

/** Phases a plugin may reply with. */
export const PLUGIN_REPLY_PHASES: readonly NodePhase[] = ['Pending', 'Running', 'Succeeded', 'Failed', 'Error'];

const PROGRESS = /^(\d{1,15})\/(\d{1,15})$/;

export type CheckedReply =
  /** A result fit for the TaskSet status; `requeueMs` when the plugin asked to be called again. */
  | { ok: true; result: NodeResult; requeueMs?: number }
  /** The reply broke the contract: the Failed result to write instead. */
  | { ok: false; result: NodeResult };

/**
 * Checks one `ExecuteTemplateReply` (already parsed JSON with a non-null `node`) from `plugin`
 * and returns the result to write, or the Failed result that names the problems.
 */
export function checkReply(plugin: string, reply: unknown): CheckedReply {
  const issues = new Issues();
  const value = isJsonObject(reply) ? reply : {};
  const result = checkNode(getOwn(value, 'node'), FieldPath.of('node'), issues);
  if (!issues.ok) return invalid(plugin, 'result', issues);
  let requeueMs: number | undefined;
  const requeue = getOwn(value, 'requeue');
  if (requeue !== undefined && requeue !== null && requeue !== '') {
    if (typeof requeue !== 'string') issues.add('requeue', `must be a duration string such as 30s, got ${describe(requeue)}`);
    else requeueMs = issues.check(() => parseGoDuration(requeue, { field: 'requeue' }));
    if (!issues.ok) {
      // The peer's wording for this row: "invalid requeue: <why>".
      return {
        ok: false,
        result: {
          phase: 'Failed',
          message: bound(`plugin ${plugin} replied with an invalid requeue: ${issues.all.map((i) => i.detail).join('; ')}`),
        },
      };
    }
  }
  const checked = ensureFailureMessage(result!, `plugin ${plugin}`);
  return requeueMs === undefined ? { ok: true, result: checked } : { ok: true, result: checked, requeueMs };
}

/**
 * The last guard before a result is written, for every kind of task (plugin, http, the agent's
 * own failures): messages bounded, a Failed/Error never without a message, outputs within
 * MAX_OUTPUTS_BYTES. Idempotent.
 */
export function boundResult(result: NodeResult): NodeResult {
  const out: NodeResult = { ...result };
  if (typeof out.message === 'string') out.message = bound(out.message);
  else delete out.message;
  if (out.outputs !== undefined) {
    const size = jsonBytes(out.outputs);
    if (size > MAX_OUTPUTS_BYTES) {
      return {
        phase: 'Failed',
        message: bound(
          `the task's outputs are ${size} bytes as JSON, over the ${formatBytes(MAX_OUTPUTS_BYTES)} limit of a task result${out.message ? ` (its message: ${out.message})` : ''}`,
        ),
      };
    }
  }
  return ensureFailureMessage(out, 'the task');
}

/** Cuts a message to MAX_MESSAGE_LENGTH, ending in a marker that says how long it was. */
export function bound(message: string, max = MAX_MESSAGE_LENGTH): string {
  if (message.length <= max) return message;
  const marker = `… [message truncated: ${message.length} characters in all]`;
  let head = message.slice(0, Math.max(0, max - marker.length));
  // Never leave half of a surrogate pair at the cut.
  if (/[\ud800-\udbff]$/.test(head)) head = head.slice(0, -1);
  return head + marker;
}

function ensureFailureMessage(result: NodeResult, who: string): NodeResult {
  if (result.phase !== 'Failed' && result.phase !== 'Error') return result;
  const text = result.message?.trim() ?? '';
  if (text === '') return { ...result, message: `${who} reported ${result.phase} without a message` };
  if (text.length < MIN_MESSAGE_LENGTH) return { ...result, message: `${who} reported ${result.phase}: ${result.message}` };
  return result;
}

function invalid(plugin: string, what: string, issues: Issues): CheckedReply {
  const all = issues.all.map((i) => i.message);
  const named = all.slice(0, MAX_PROBLEMS).join('; ');
  const more = all.length > MAX_PROBLEMS ? ` (and ${all.length - MAX_PROBLEMS} more problems)` : '';
  return { ok: false, result: { phase: 'Failed', message: bound(`plugin ${plugin} replied with an invalid ${what}: ${named}${more}`) } };
}

/** The node, rebuilt from its checked fields; problems go to `issues`. */
function checkNode(node: unknown, at: FieldPath, issues: Issues): NodeResult | undefined {
  if (!isJsonObject(node)) {
    issues.add(at, `must be an object, got ${describe(node)}`);
    return undefined;
  }
  const out: NodeResult = {};
  const phase = getOwn(node, 'phase');
  if (phase === undefined || phase === null || phase === '')
    issues.add(at.child('phase'), `is required: one of ${PLUGIN_REPLY_PHASES.join(', ')}`);
  else if (typeof phase !== 'string' || !PLUGIN_REPLY_PHASES.includes(phase as NodePhase)) {
    issues.add(at.child('phase'), `must be one of ${PLUGIN_REPLY_PHASES.join(', ')}, got ${describe(phase)}`);
  } else out.phase = phase as NodePhase;

  const message = getOwn(node, 'message');
  if (message !== undefined && message !== null) {
    if (typeof message !== 'string') issues.add(at.child('message'), `must be a string, got ${describe(message)}`);
    else if (message !== '') out.message = bound(message);
  }

  const progress = getOwn(node, 'progress');
  if (progress !== undefined && progress !== null && progress !== '') {
    const m = typeof progress === 'string' ? PROGRESS.exec(progress) : null;
    const [done, total] = m ? [Number(m[1]), Number(m[2])] : [0, 0];
    if (!m || total < 1 || done > total) {
      issues.add(
        at.child('progress'),
        `must be done/total with 0 ≤ done ≤ total and total ≥ 1 (for example 1/3), got ${describe(progress)}`,
      );
    } else out.progress = `${done}/${total}`;
  }

  const outputs = getOwn(node, 'outputs');
  if (outputs !== undefined && outputs !== null) {
    const checked = checkOutputs(outputs, at.child('outputs'), issues);
    if (checked) {
      const size = jsonBytes(checked);
      if (size > MAX_OUTPUTS_BYTES) {
        issues.add(
          at.child('outputs'),
          `is ${size} bytes as JSON, over the ${formatBytes(MAX_OUTPUTS_BYTES)} limit of a task result (large data belongs in artifacts)`,
        );
      } else if (Object.keys(checked).length > 0) out.outputs = checked;
    }
  }
  return out;
}

function checkOutputs(outputs: unknown, at: FieldPath, issues: Issues): Outputs | undefined {
  if (!isJsonObject(outputs)) {
    issues.add(at, `must be an object, got ${describe(outputs)}`);
    return undefined;
  }
  const out: Outputs = {};
  const before = issues.all.length;

  const parameters = getOwn(outputs, 'parameters');
  if (parameters !== undefined && parameters !== null) {
    if (!Array.isArray(parameters)) issues.add(at.child('parameters'), `must be a list of {name, value}, got ${describe(parameters)}`);
    else {
      const list: Parameter[] = [];
      parameters.forEach((p, i) => {
        const pat = at.child('parameters').index(i);
        if (!isJsonObject(p)) return issues.add(pat, `must be an object {name, value}, got ${describe(p)}`);
        const name = getOwn(p, 'name');
        if (typeof name !== 'string' || name === '')
          issues.add(
            pat.child('name'),
            name === undefined || name === null || name === '' ? 'is required' : `must be a string, got ${describe(name)}`,
          );
        const value = getOwn(p, 'value');
        let text: string | undefined;
        if (value !== undefined && value !== null) {
          if (!isAnyString(value)) issues.add(pat.child('value'), `must be a string, number or boolean, got ${describe(value)}`);
          else text = issues.check(() => anyStringToString(value, pat.child('value')));
        }
        if (typeof name === 'string' && name !== '') list.push(text === undefined ? { name } : { name, value: text });
      });
      out.parameters = list;
    }
  }

  const artifacts = getOwn(outputs, 'artifacts');
  if (artifacts !== undefined && artifacts !== null) {
    if (!Array.isArray(artifacts)) issues.add(at.child('artifacts'), `must be a list of artifacts, got ${describe(artifacts)}`);
    else {
      artifacts.forEach((a, i) => {
        const aat = at.child('artifacts').index(i);
        if (!isJsonObject(a)) return issues.add(aat, `must be an object, got ${describe(a)}`);
        const name = getOwn(a, 'name');
        if (typeof name !== 'string' || name === '')
          issues.add(
            aat.child('name'),
            name === undefined || name === null || name === '' ? 'is required' : `must be a string, got ${describe(name)}`,
          );
        if (depthOver(a, MAX_ARTIFACT_DEPTH)) issues.add(aat, `is nested more than ${MAX_ARTIFACT_DEPTH} levels deep`);
      });
      out.artifacts = artifacts as Outputs['artifacts'];
    }
  }

  for (const key of ['result', 'exitCode'] as const) {
    const v = getOwn(outputs, key);
    if (v === undefined || v === null) continue;
    if (typeof v !== 'string') issues.add(at.child(key), `must be a string, got ${describe(v)}`);
    else out[key] = v;
  }
  return issues.all.length === before ? out : undefined;
}

/** True when `value` has containers nested deeper than `max` (iterative: no stack to blow). */
function depthOver(value: unknown, max: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth > max) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push([child, depth + 1]);
  }
  return false;
}

function jsonBytes(v: unknown): number {
  return Buffer.byteLength(JSON.stringify(v) ?? '');
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} bytes`;
  if (n < 1024 * 1024) return `${trim(n / 1024)} KiB`;
  return `${trim(n / (1024 * 1024))} MiB`;
}

function trim(x: number): string {
  return x.toFixed(1).replace(/\.0$/, '');
}

/** `a list`, `a number (5)`, `"Bogus"`: what a wrong value was, short. */
export function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  switch (typeof v) {
    case 'string':
      return JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v);
    case 'number':
    case 'boolean':
      return `${typeof v} ${String(v)}`;
    case 'object':
      return 'an object';
    default:
      return typeof v;
  }
}
