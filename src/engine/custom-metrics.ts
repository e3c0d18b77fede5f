/**
 * Custom metrics (`metrics.vendorP` of the workflow spec and of templates — the peer's
 * `metrics.prometheus`): which ones a status change emits, with what labels and value. Pure;
 * the controller's registry (src/controller/custom-metric-registry.ts) records them.
 *
 * - Template-level metrics are emitted once, when a node of the template ends; workflow-level
 *   ones when the workflow ends. A `gauge` with `realtime: true` instead follows the running
 *   node or workflow: its value is the seconds since it started, read at every scrape, frozen at
 *   the end.
 * - `labels`, `value` and `when` are rendered with the variables of the node (`status`,
 *   `duration`, `resourcesDuration.cpu|memory`, `exitCode`, `inputs.parameters.<p>`,
 *   `outputs.parameters.<p>`, `outputs.result`)
 *   or of the workflow (`workflow.name`, `workflow.namespace`, `workflow.status`,
 *   `workflow.duration`, `workflow.parameters.<p>`, `workflow.labels.<k>`, …), as the peer does.
 * - A metric whose `when` is false is not emitted; one whose value is not a number is skipped
 *   with a reason (the controller logs it).
 */
import type { NodeStatus, Template, Workflow, WorkflowStatus } from '../api/index.js';
import { parseQuantity, quantityToNumber } from '../api/index.js';
import { evaluateWhenText, renderString } from './expressions.js';
import { errorMessage } from '../log/error-message.js';

export interface MetricSpec {
  name?: string;
  help?: string;
  labels?: { key?: string; value?: string }[];
  when?: string;
  counter?: { value?: string };
  gauge?: { value?: string; realtime?: boolean };
  histogram?: { value?: string; buckets?: (number | string)[] };
}

export type MetricKind = 'counter' | 'gauge' | 'histogram';

/** One thing to record. */
export interface Emission {
  name: string;
  help: string;
  kind: MetricKind;
  labels: Record<string, string>;
  /** counter: added; gauge: set; histogram: observed. Absent for a realtime gauge. */
  value?: number;
  buckets?: number[];
  /** A realtime gauge: seconds since `startMs`, until `endMs` when it ended. */
  realtime?: { startMs: number; endMs?: number };
  /** Where it was declared, for messages. */
  where: string;
}

export interface Skipped {
  where: string;
  reason: string;
}

/** Metric names and label keys (Prometheus' rules, without colons, which are for recording rules). */
const METRIC_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const LABEL_KEY = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/**
 * The label the controller adds to every custom series: the workflow's namespace. Workflows may
 * not set it, so one namespace can never write into another's series.
 */
export const NAMESPACE_LABEL = 'workflow_namespace';

/** Bounds of one declaration (what the shared controller registers per metric name). */
export const MAX_METRIC_NAME = 200;
export const MAX_METRIC_HELP = 1024;
export const MAX_METRIC_LABELS = 16;
export const MAX_METRIC_BUCKETS = 64;
export const MAX_LABEL_NAME = 128;

/** What is wrong with the metrics of `where` (spec.metrics, spec.templates[x].metrics), for validation. */
export function metricProblems(metrics: { vendorP?: unknown } | undefined, where: string): string[] {
  if (!metrics) return [];
  const list = metrics.vendorP;
  if (!Array.isArray(list)) return [`${where}.vendorP: a list of metrics is required`];
  const out: string[] = [];
  list.forEach((m: MetricSpec, i) => {
    const at = `${where}.vendorP[${typeof m?.name === 'string' && m.name ? m.name : i}]`;
    if (!m || typeof m !== 'object') return void out.push(`${at}: a metric must be an object`);
    if (typeof m.name !== 'string' || !METRIC_NAME.test(m.name))
      out.push(
        `${at}.name: ${JSON.stringify(String(m.name ?? '').slice(0, 80))} is not a metric name (letters, digits and '_', not starting with a digit)`,
      );
    else if (m.name.length > MAX_METRIC_NAME) out.push(`${at}.name: a metric name is at most ${MAX_METRIC_NAME} characters`);
    if (typeof m.help !== 'string' || m.help.trim() === '') out.push(`${at}.help: a metric needs a help text`);
    else if (m.help.length > MAX_METRIC_HELP) out.push(`${at}.help: a help text is at most ${MAX_METRIC_HELP} characters`);
    const kinds = (['counter', 'gauge', 'histogram'] as const).filter((k) => m[k] !== undefined);
    if (kinds.length !== 1)
      out.push(`${at}: exactly one of counter, gauge and histogram is required (found ${kinds.length ? kinds.join(', ') : 'none'})`);
    const kind = kinds[0];
    if (kind && typeof m[kind]?.value !== 'string') out.push(`${at}.${kind}.value: a value is required`);
    if (kind === 'histogram') {
      const b = m.histogram?.buckets;
      if (!Array.isArray(b) || b.length === 0) out.push(`${at}.histogram.buckets: at least one bucket is required`);
      else if (b.length > MAX_METRIC_BUCKETS) out.push(`${at}.histogram.buckets: at most ${MAX_METRIC_BUCKETS} buckets`);
      else if (b.map(Number).some((x, j, xs) => !Number.isFinite(x) || (j > 0 && x <= xs[j - 1]!)))
        out.push(`${at}.histogram.buckets: buckets must be numbers in increasing order`);
    }
    if (m.gauge?.realtime && !/^\s*\{\{\s*(workflow\.)?duration\s*\}\}\s*$/.test(m.gauge.value ?? ''))
      out.push(`${at}.gauge.value: a realtime gauge follows the running time: its value must be {{duration}} (or {{workflow.duration}})`);
    const keys = new Set<string>();
    if ((m.labels ?? []).length > MAX_METRIC_LABELS) out.push(`${at}.labels: at most ${MAX_METRIC_LABELS} labels`);
    else
      for (const l of m.labels ?? []) {
        if (typeof l?.key !== 'string' || !LABEL_KEY.test(l.key))
          out.push(`${at}.labels: ${JSON.stringify(String(l?.key ?? '').slice(0, 80))} is not a label name`);
        else if (l.key.length > MAX_LABEL_NAME) out.push(`${at}.labels: a label name is at most ${MAX_LABEL_NAME} characters`);
        else if (l.key === 'le' && kind === 'histogram')
          out.push(`${at}.labels: le is the bucket bound of every histogram series; use another label name`);
        else if (l.key === NAMESPACE_LABEL)
          out.push(`${at}.labels: ${NAMESPACE_LABEL} is set by the controller (the workflow's namespace); use another label name`);
        else if (keys.has(l.key)) out.push(`${at}.labels: label ${l.key} is given twice`);
        else keys.add(l.key);
      }
  });
  return out;
}

/**
 * `resourcesDuration.cpu` / `.memory` of a pod node, estimated as the peer does: for each
 * container of the template (main and sidecars), its request (else its limit, else 100m CPU and
 * 100Mi memory) divided by the base amount (1 CPU, 100Mi), times the node's run time in seconds.
 */
export function resourcesDuration(template: Template | undefined, durationSeconds: number): { cpu: number; memory: number } {
  const main = template?.container ?? template?.script;
  const containers = [...(main ? [main] : []), ...(template?.sidecars ?? [])] as {
    resources?: { requests?: Record<string, unknown>; limits?: Record<string, unknown> };
  }[];
  const amount = (c: (typeof containers)[number], key: string, fallback: string) => {
    const given = c.resources?.requests?.[key] ?? c.resources?.limits?.[key] ?? fallback;
    try {
      return quantityToNumber(parseQuantity(given as string | number));
    } catch {
      return quantityToNumber(parseQuantity(fallback));
    }
  };
  let cpu = 0;
  let memory = 0;
  for (const c of containers) {
    cpu += amount(c, 'cpu', '100m');
    memory += amount(c, 'memory', '100Mi') / (100 * 1024 * 1024);
  }
  const round = (x: number) => Math.round(x * durationSeconds * 1000) / 1000;
  return { cpu: round(cpu), memory: round(memory) };
}

/** The variables of a node for its template's metrics. */
export function nodeMetricVariables(node: NodeStatus, nowMs: number, template?: Template): Record<string, string> {
  const vars: Record<string, string> = Object.create(null) as Record<string, string>;
  vars.status = node.phase;
  const duration = seconds(node.startedAt, node.finishedAt, nowMs);
  vars.duration = String(duration);
  if (node.type === 'Pod' || node.type === 'Retry') {
    const rd = resourcesDuration(template, duration);
    vars['resourcesDuration.cpu'] = String(rd.cpu);
    vars['resourcesDuration.memory'] = String(rd.memory);
  }
  if (node.outputs?.exitCode !== undefined) vars.exitCode = String(node.outputs.exitCode);
  if (node.outputs?.result !== undefined) vars['outputs.result'] = String(node.outputs.result);
  for (const p of node.inputs?.parameters ?? []) if (p.value !== undefined) vars[`inputs.parameters.${p.name}`] = String(p.value);
  for (const p of node.outputs?.parameters ?? []) if (p.value !== undefined) vars[`outputs.parameters.${p.name}`] = String(p.value);
  vars['node.name'] = node.name;
  return vars;
}

/** The variables of a workflow for its workflow-level metrics. */
export function workflowMetricVariables(wf: Workflow, status: WorkflowStatus, nowMs: number): Record<string, string> {
  const vars: Record<string, string> = Object.create(null) as Record<string, string>;
  vars['workflow.name'] = wf.metadata?.name ?? '';
  vars['workflow.namespace'] = wf.metadata?.namespace ?? '';
  vars['workflow.status'] = status.phase ?? '';
  vars['workflow.duration'] = String(seconds(status.startedAt, status.finishedAt, nowMs));
  vars.status = vars['workflow.status'];
  vars.duration = vars['workflow.duration'];
  for (const p of wf.spec?.arguments?.parameters ?? []) if (p.value !== undefined) vars[`workflow.parameters.${p.name}`] = String(p.value);
  for (const [k, v] of Object.entries(wf.metadata?.labels ?? {})) vars[`workflow.labels.${k}`] = v;
  for (const [k, v] of Object.entries(wf.metadata?.annotations ?? {})) vars[`workflow.annotations.${k}`] = v;
  return vars;
}

function seconds(start: string | undefined, end: string | undefined, nowMs: number): number {
  const s = Date.parse(start ?? '');
  if (Number.isNaN(s)) return 0;
  const e = end ? Date.parse(end) : nowMs;
  return Math.max(0, ((Number.isNaN(e) ? nowMs : e) - s) / 1000);
}

/**
 * The emissions of `metrics` (declared at `where`) for something that `ended` (or runs, for
 * realtime gauges), with `vars`. `ended` false emits only realtime gauges.
 */
export function emissionsOf(
  metrics: { vendorP?: MetricSpec[] } | undefined,
  where: string,
  vars: Record<string, string>,
  timing: { startMs: number; endMs?: number },
  ended: boolean,
): { emissions: Emission[]; skipped: Skipped[] } {
  const emissions: Emission[] = [];
  const skipped: Skipped[] = [];
  for (const m of metrics?.vendorP ?? []) {
    const at = `${where}.vendorP[${m.name}]`;
    const kind: MetricKind | undefined = m.counter ? 'counter' : m.gauge ? 'gauge' : m.histogram ? 'histogram' : undefined;
    if (!kind || !m.name) continue;
    const realtime = kind === 'gauge' && m.gauge?.realtime === true;
    if (!realtime && !ended) continue;
    try {
      if (m.when && !evaluateWhenText(m.when, vars, `${at}.when`).result) continue;
      const labels: Record<string, string> = {};
      for (const l of m.labels ?? []) if (l.key) labels[l.key] = renderString(l.value ?? '', vars, `${at}.labels.${l.key}`);
      const base = { name: m.name, help: m.help ?? m.name, kind, labels, where: at };
      if (realtime) {
        emissions.push({
          ...base,
          realtime: { startMs: timing.startMs, ...(ended && timing.endMs !== undefined ? { endMs: timing.endMs } : {}) },
        });
        continue;
      }
      const text = renderString(m[kind]?.value ?? '', vars, `${at}.${kind}.value`).trim();
      const value = Number(text);
      if (text === '' || !Number.isFinite(value)) {
        skipped.push({ where: at, reason: `the value ${JSON.stringify(text)} is not a number` });
        continue;
      }
      emissions.push({ ...base, value, ...(kind === 'histogram' ? { buckets: (m.histogram?.buckets ?? []).map(Number) } : {}) });
    } catch (err) {
      skipped.push({ where: at, reason: errorMessage(err) });
    }
  }
  return { emissions, skipped };
}

/**
 * The emissions a status change causes: for each node that ended in `after` and had not in
 * `before`, its template's metrics; for the workflow, when it ended. Realtime gauges of running
 * nodes and of the running workflow are emitted on every change (the registry keeps one series).
 */
export function statusMetrics(
  wf: Workflow,
  before: WorkflowStatus | undefined,
  after: WorkflowStatus,
  templateOf: (node: NodeStatus) => Template | undefined,
  nowMs: number,
): { emissions: Emission[]; skipped: Skipped[] } {
  const emissions: Emission[] = [];
  const skipped: Skipped[] = [];
  const add = (r: { emissions: Emission[]; skipped: Skipped[] }) => {
    emissions.push(...r.emissions);
    skipped.push(...r.skipped);
  };
  const FINAL = ['Succeeded', 'Failed', 'Error', 'Skipped', 'Omitted'];
  for (const node of Object.values(after.nodes ?? {})) {
    const t = templateOf(node);
    if (!t?.metrics) continue;
    const ended = FINAL.includes(node.phase);
    const was = before?.nodes?.[node.id];
    if (ended && was && FINAL.includes(was.phase)) continue;
    if (node.phase === 'Skipped' || node.phase === 'Omitted') continue;
    const timing = {
      startMs: Date.parse(node.startedAt ?? '') || nowMs,
      ...(node.finishedAt ? { endMs: Date.parse(node.finishedAt) } : {}),
    };
    add(emissionsOf(t.metrics as never, `template ${JSON.stringify(t.name)}.metrics`, nodeMetricVariables(node, nowMs, t), timing, ended));
  }
  const wfMetrics = wf.spec?.metrics as { vendorP?: MetricSpec[] } | undefined;
  const finalWf = ['Succeeded', 'Failed', 'Error'];
  const ended = finalWf.includes(after.phase ?? '');
  if (wfMetrics && after.phase && !(ended && finalWf.includes(before?.phase ?? ''))) {
    const timing = {
      startMs: Date.parse(after.startedAt ?? '') || nowMs,
      ...(after.finishedAt ? { endMs: Date.parse(after.finishedAt) } : {}),
    };
    add(emissionsOf(wfMetrics, 'spec.metrics', workflowMetricVariables(wf, after, nowMs), timing, ended));
  }
  return { emissions, skipped };
}
