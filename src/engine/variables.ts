/**
 * The variables templates can use, as a flat map from the dotted name inside `{{…}}` to its
 * string value (`"steps.gen.outputs.result" → "3"`). The expression language builds nested
 * objects from these names for `{{=…}}` and `when`.
 *
 * - workflow: `workflow.name|namespace|uid|mainEntrypoint|serviceAccountName|priority`,
 *   `workflow.creationTimestamp` (RFC 3339) and its `.RFC3339`, `.s` (Unix seconds) and strftime
 *   forms (`.Y`, `.m`, … — workflowTimeVariables), `workflow.scheduledTime` (the cron's
 *   scheduled-time annotation, only when set), `workflow.labels|annotations` (JSON maps, also as
 *   `.json`, and `.<name>`), `workflow.parameters.<p>`
 *   (and `workflow.parameters` / `workflow.parameters.json`: the list of `{name, value}` as JSON,
 *   as the peer gives both), `workflow.duration` (seconds since the workflow started, `%f` like
 *   the peer: `12.500000`), `workflow.outputs.parameters.<globalName>`, and in exit handlers
 *   `workflow.status` and `workflow.failures`;
 * - a finished step or task X (prefix `steps.X` / `tasks.X`): `.id`, `.status`, `.startedAt`, `.ip`
 *   (a daemon's pod IP), `.hostNodeName` (the Kubernetes node its pod ran on),
 *   `.finishedAt`, `.exitCode`, `.outputs.result`, `.outputs.exitCode`,
 *   `.outputs.parameters.<p>`, `.outputs.artifacts.<a>` (the record as JSON); for a loop, `.outputs.result` and `.outputs.parameters.<p>` are
 *   JSON lists over the items and `.outputs.parameters` a JSON list of `{name: value}` maps.
 */
import { artifactVariable } from './artifacts.js';
import { configMapValue, type ParameterConfigMaps } from './parameter-config-maps.js';
import {
  ANNOTATION_SCHEDULED_TIME,
  anyStringToString,
  parseUserJson,
  type NodeStatus,
  type Workflow,
  type WorkflowSpec,
} from '../api/index.js';

/**
 * Variable name → value. `null` marks an *absent* value: a declared output of a step or task that
 * never ran and has no default (skipped-outputs.ts). A simple tag naming it fails ("has no
 * value"); inside `{{=…}}` it is `nil`, so `?? 'fallback'` works.
 */
export type Vars = Record<string, string | null>;

/** Throws when an argument's configMapKeyRef cannot be read and it has no default (parameter-config-maps.ts). */
export function workflowVariables(
  workflow: Workflow,
  spec: WorkflowSpec,
  globalOutputs: ReadonlyArray<[string, string]>,
  configMaps: ParameterConfigMaps = {},
): Record<string, string> {
  const meta = workflow.metadata ?? {};
  const vars: Record<string, string> = {
    'workflow.name': meta.name ?? '',
    'workflow.namespace': meta.namespace ?? '',
    'workflow.uid': meta.uid ?? '',
    // The entrypoint of the workflow as run (a workflowTemplateRef's when the workflow names none).
    'workflow.mainEntrypoint': spec.entrypoint ?? '',
    'workflow.serviceAccountName': spec.serviceAccountName ?? '',
  };
  if (typeof spec.priority === 'number') vars['workflow.priority'] = String(Math.trunc(spec.priority));
  if (meta.creationTimestamp) Object.assign(vars, workflowTimeVariables(String(meta.creationTimestamp)));
  const scheduled = meta.annotations?.[ANNOTATION_SCHEDULED_TIME];
  if (scheduled !== undefined) vars['workflow.scheduledTime'] = scheduled;
  Object.assign(vars, metadataVariables('labels', meta.labels, spec.workflowMetadata?.labels));
  Object.assign(vars, metadataVariables('annotations', meta.annotations, spec.workflowMetadata?.annotations));
  const params = spec.arguments?.parameters ?? [];
  const listed: Array<{ name: string; value: string }> = [];
  for (const p of params) {
    const field = `spec.arguments.parameters[${p.name}]`;
    let raw = p.value;
    const ref = p.valueFrom?.configMapKeyRef;
    if (raw === undefined && ref) {
      const found = configMapValue(configMaps, ref, field, p.valueFrom?.default !== undefined || p.default !== undefined);
      if (!found.ok) throw new Error(found.error);
      raw = found.value;
    }
    raw ??= p.valueFrom?.default ?? p.default;
    if (raw === undefined) continue;
    const value = anyStringToString(raw, field);
    vars[`workflow.parameters.${p.name}`] = value;
    listed.push({ name: p.name, value });
  }
  if (listed.length > 0) vars['workflow.parameters'] = JSON.stringify(listed);
  // The peer's alias of `workflow.parameters` that also works inside `{{=…}}` (there
  // `workflow.parameters` is the map of parameters by name); always set, `[]` without parameters.
  vars['workflow.parameters.json'] = JSON.stringify(listed);
  for (const [name, value] of globalOutputs) vars[`workflow.outputs.parameters.${name}`] = value;
  return vars;
}

/**
 * `workflow.labels` / `workflow.annotations` (and their `.json`): the workflow's own map as JSON,
 * keys sorted (`{}` when it has none, where the peer prints `null`); `.<name>` for each entry
 * and for each `spec.workflowMetadata` entry, which the workflow gives itself as it starts.
 */
function metadataVariables(
  kind: 'labels' | 'annotations',
  own: Record<string, string> | undefined,
  added: Record<string, string> | undefined,
) {
  const vars: Record<string, string> = {};
  const sorted = Object.fromEntries(Object.entries(own ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  vars[`workflow.${kind}`] = JSON.stringify(sorted);
  vars[`workflow.${kind}.json`] = JSON.stringify(sorted);
  for (const [k, v] of Object.entries({ ...own, ...added })) if (typeof v === 'string') vars[`workflow.${kind}.${k}`] = v;
  return vars;
}

const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

/**
 * `workflow.creationTimestamp` in RFC 3339 (also as `.RFC3339`), `.s` (Unix seconds), and one
 * variable per strftime character the peer offers (`.Y` 2024, `.y` 24, `.m` 01, `.d` 02, `.H`
 * 15, `.I` 03, `.M` 04, `.S` 05, `.p` PM, `.B` January, `.b` Jan, `.A` Monday, `.a` Mon, `.Z`
 * UTC, `.z` +0000, `.L` .000), in UTC. A value the API server would not have written is kept as
 * it is, without the derived forms.
 */
export function workflowTimeVariables(created: string): Record<string, string> {
  const ms = Date.parse(created);
  if (Number.isNaN(ms)) return { 'workflow.creationTimestamp': created };
  const t = new Date(ms);
  const two = (n: number) => String(n).padStart(2, '0');
  const rfc3339 = t.toISOString().replace(/\.\d{3}Z$/, 'Z');
  const hours = t.getUTCHours();
  const chars: Record<string, string> = {
    B: MONTHS[t.getUTCMonth()]!,
    b: MONTHS[t.getUTCMonth()]!.slice(0, 3),
    m: two(t.getUTCMonth() + 1),
    A: DAYS[t.getUTCDay()]!,
    a: DAYS[t.getUTCDay()]!.slice(0, 3),
    d: two(t.getUTCDate()),
    H: two(hours),
    I: two(hours % 12 === 0 ? 12 : hours % 12),
    M: two(t.getUTCMinutes()),
    S: two(t.getUTCSeconds()),
    Y: String(t.getUTCFullYear()),
    y: two(t.getUTCFullYear() % 100),
    p: hours < 12 ? 'AM' : 'PM',
    Z: 'UTC',
    z: '+0000',
    L: `.${String(t.getUTCMilliseconds()).padStart(3, '0')}`,
  };
  const vars: Record<string, string> = {
    'workflow.creationTimestamp': rfc3339,
    'workflow.creationTimestamp.RFC3339': rfc3339,
    'workflow.creationTimestamp.s': String(Math.floor(ms / 1000)),
  };
  for (const [c, v] of Object.entries(chars)) vars[`workflow.creationTimestamp.${c}`] = v;
  return vars;
}

/** `workflow.duration`: seconds from `startedAtMs` to `nowMs` with six decimals, as the peer prints it. */
export function workflowDuration(startedAtMs: number, nowMs: number): string {
  return (Math.max(0, nowMs - startedAtMs) / 1000).toFixed(6);
}

/** Variables of one finished node under `prefix` (`steps.X` or `tasks.X`). */
export function nodeVariables(prefix: string, node: NodeStatus): Vars {
  const vars: Vars = {
    [`${prefix}.id`]: node.id,
    [`${prefix}.status`]: node.phase,
  };
  if (node.startedAt) vars[`${prefix}.startedAt`] = node.startedAt;
  if (node.podIP) vars[`${prefix}.ip`] = node.podIP;
  if (node.hostNodeName) vars[`${prefix}.hostNodeName`] = node.hostNodeName;
  if (node.finishedAt) vars[`${prefix}.finishedAt`] = node.finishedAt;
  const out = node.outputs;
  if (out?.exitCode !== undefined) {
    vars[`${prefix}.exitCode`] = out.exitCode;
    vars[`${prefix}.outputs.exitCode`] = out.exitCode;
  }
  if (out?.result !== undefined) vars[`${prefix}.outputs.result`] = out.result;
  for (const p of out?.parameters ?? []) {
    if (p.value !== undefined) vars[`${prefix}.outputs.parameters.${p.name}`] = anyStringToString(p.value);
  }
  // The artifact's record as JSON: `from: "{{steps.X.outputs.artifacts.Y}}"` reads it back (artifacts.ts).
  for (const a of out?.artifacts ?? []) vars[`${prefix}.outputs.artifacts.${a.name}`] = artifactVariable(a);
  return vars;
}

/**
 * Variables of a looped step or task under `prefix`: the same names as one node, holding JSON
 * lists over the items in item order. `status` is that of the loop as a whole.
 */
export function loopVariables(prefix: string, items: readonly NodeStatus[], status: string, id?: string): Vars {
  const vars: Vars = { [`${prefix}.status`]: status };
  if (id) vars[`${prefix}.id`] = id;
  const results = items.filter((n) => n.outputs?.result !== undefined).map((n) => n.outputs!.result!);
  if (results.length > 0) vars[`${prefix}.outputs.result`] = JSON.stringify(results.map(parseIfJson));
  const names: string[] = [];
  for (const n of items) for (const p of n.outputs?.parameters ?? []) if (!names.includes(p.name)) names.push(p.name);
  for (const name of names) {
    const values = items.map((n) => n.outputs?.parameters?.find((p) => p.name === name)?.value).filter((v) => v !== undefined);
    vars[`${prefix}.outputs.parameters.${name}`] = JSON.stringify(values.map((v) => anyStringToString(v)));
  }
  if (names.length > 0) {
    const maps = items.map((n) =>
      Object.fromEntries((n.outputs?.parameters ?? []).map((p) => [p.name, p.value === undefined ? '' : anyStringToString(p.value)])),
    );
    vars[`${prefix}.outputs.parameters`] = JSON.stringify(maps);
  }
  return vars;
}

/**
 * A result that is itself JSON (a script printing `{"a":1}`) is kept as JSON inside the
 * aggregated list, so `withParam` over it sees objects, not strings.
 */
function parseIfJson(text: string): unknown {
  const t = text.trim();
  if (t.startsWith('{') || t.startsWith('[')) {
    try {
      return parseUserJson(t, 'a step result');
    } catch {
      return text;
    }
  }
  return text;
}

/** `workflow.status` and `workflow.failures` for exit handlers. */
export function exitHandlerVariables(phase: string, nodes: Readonly<Record<string, NodeStatus>>): Vars {
  const failed: NodeStatus[] = [];
  for (const id in nodes) {
    const n = nodes[id]!;
    if (
      (n.phase === 'Failed' || n.phase === 'Error') &&
      (n.type === 'Pod' || n.type === 'Plugin' || n.type === 'HTTP' || n.type === 'Resource' || n.type === 'Suspend')
    )
      failed.push(n);
  }
  const failures = failed
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map((n) => ({
      displayName: n.displayName,
      message: n.message ?? '',
      templateName: n.templateName ?? '',
      phase: n.phase,
      podName: n.podName ?? '',
      finishedAt: n.finishedAt ?? '',
    }));
  return { 'workflow.status': phase, 'workflow.failures': JSON.stringify(failures) };
}
