/**
 * Validation of one template: its kind, numbers and durations, retry strategy, inputs, outputs,
 * expressions and `{{…}}` tags, and (through validate-calls.ts) its steps or DAG tasks.
 * See validate.ts for the overall rules.
 */
import { metricProblems } from './custom-metrics.js';
import {
  anyStringToString,
  HTTP_METHODS,
  intOrStringToFloat,
  isAnyString,
  intOrStringToNumber,
  makesPod,
  parseGoDuration,
  POD_FIELDS,
  POD_KINDS,
  parseSecondsOrDuration,
  RETRY_POLICIES,
  type Parameter,
  type Template,
} from '../api/index.js';
import { substituteExpressionTags } from './expression-tags.js';
import { checkExpression, checkTags, tagNames } from './expressions.js';
import type { TemplateResolver } from './template-resolver.js';
import { validateDag, validateSteps } from './validate-calls.js';
import { validateResource } from './validate-resource.js';
import { validateContainerSet } from './validate-container-set.js';
import { checkPodLevelFields } from './pod-level-fields.js';
import { checkTemplateAnnotations } from './display-name.js';
import { errorMessage } from '../log/error-message.js';

export interface TemplateContext {
  resolver: TemplateResolver;
  /** Whether templateRefs can be checked (the WorkflowTemplates were provided). */
  checkRefs: boolean;
  add(field: string, detail: string): void;
}

const SUPPORTED_KINDS = ['container', 'script', 'containerSet', 'data', 'steps', 'dag', 'suspend', 'plugin', 'http', 'resource'];

/** Validates `t` found at `where`; `scope` is where its plain template names resolve. */
export function validateTemplate(t: Template, where: string, scope: string | undefined, ctx: TemplateContext): void {
  const { add } = ctx;
  const kinds = SUPPORTED_KINDS.filter((k) => t[k as keyof Template] !== undefined);
  if (kinds.length === 0) add(where, `has no kind: give one of ${SUPPORTED_KINDS.join(', ')}`);
  else if (kinds.length > 1) add(where, `has more than one kind (${kinds.join(', ')}); keep one`);

  if (t.container && !t.container.image) add(`${where}.container.image`, 'is required');
  if (t.script && !t.script.image) add(`${where}.script.image`, 'is required');
  if (t.script && typeof t.script.source !== 'string') add(`${where}.script.source`, 'is required');
  if (t.http) {
    if (!t.http.url) add(`${where}.http.url`, 'is required');
    if (t.http.method && !tagged(t.http.method) && !(HTTP_METHODS as readonly string[]).includes(t.http.method.toUpperCase())) {
      add(`${where}.http.method`, `must be one of ${HTTP_METHODS.join(', ')}, got ${JSON.stringify(t.http.method)}`);
    }
    if (t.http.successCondition) expression(t.http.successCondition, `${where}.http.successCondition`, ctx);
  }
  if (t.plugin && (typeof t.plugin !== 'object' || Object.keys(t.plugin).length !== 1)) {
    add(`${where}.plugin`, 'must be an object with exactly one key, the plugin name');
  }
  if (t.suspend?.duration !== undefined) duration(t.suspend.duration, `${where}.suspend.duration`, ctx);
  if (t.timeout !== undefined) duration(t.timeout, `${where}.timeout`, ctx);
  if (t.activeDeadlineSeconds !== undefined) integer(t.activeDeadlineSeconds, `${where}.activeDeadlineSeconds`, 1, ctx);
  if (t.parallelism !== undefined && !(Number.isInteger(t.parallelism) && t.parallelism >= 1)) {
    add(`${where}.parallelism`, `must be a whole number of at least 1, got ${JSON.stringify(t.parallelism)}`);
  }
  validateResource(t, where, ctx);
  if (t.containerSet) validateContainerSet(t, where, ctx);
  if (t.data) {
    if (!t.data.source?.artifactPaths) ctx.add(`${where}.data.source.artifactPaths`, 'is required: it is what the data template lists');
    (Array.isArray(t.data.transformation) ? t.data.transformation : []).forEach((step, i) => {
      const field = `${where}.data.transformation[${i}].expression`;
      if (typeof step?.expression !== 'string' || step.expression === '') ctx.add(field, 'is required');
      else if (!tagged(step.expression)) expression(step.expression, field, ctx);
    });
  }
  checkPodFields(t, where, kinds, ctx);
  checkPodLevelFields(t, where, ctx.add);
  checkTemplateAnnotations(t, where, ctx.add);
  checkRetry(t, where, ctx);
  checkMemoize(t, where, ctx);
  if (t.daemon !== undefined && typeof t.daemon !== 'boolean') ctx.add(`${where}.daemon`, 'must be true or false');
  if (t.daemon === true && !t.container && !t.script)
    ctx.add(
      `${where}.daemon`,
      'only container and script templates can be daemons (their pod serves while the steps or DAG that started it run)',
    );
  for (const problem of metricProblems(t.metrics as never, `${where}.metrics`)) addProblem(problem, ctx.add);
  checkParameters(t, where, ctx);
  checkAllTags(t, where, ctx);
  if (t.steps) validateSteps(t, where, scope, ctx);
  if (t.dag) validateDag(t, where, scope, ctx);
}

/**
 * Nothing to apply: absent, null, or an object with nothing in it (all the way down). The peer's
 * Go clients send every template with `metadata: {}` (a struct field, which omitempty does not
 * drop), which asks for nothing and is not refused. A list, even empty, was written by someone.
 */
function isEmptyValue(v: unknown): boolean {
  if (v === undefined || v === null) return true;
  if (typeof v === 'object' && !Array.isArray(v)) return Object.values(v as Record<string, unknown>).every(isEmptyValue);
  return false;
}

/** Fields of the step pod on a template that makes none would be ignored: refused instead. */
function checkPodFields(t: Template, where: string, kinds: string[], ctx: TemplateContext): void {
  if (kinds.length !== 1 || makesPod(t)) return;
  const kind = kinds[0]!;
  const raw = t as unknown as Record<string, unknown>;
  const pods = POD_KINDS.join(', ');
  for (const f of POD_FIELDS)
    if (!isEmptyValue(raw[f]))
      ctx.add(`${where}.${f}`, `shapes the step pod, and a ${kind} template runs none (only ${pods} templates do)`);
  if (t.serviceAccountName !== undefined && kind !== 'resource')
    ctx.add(
      `${where}.serviceAccountName`,
      `is the account of a step pod or of a resource template's calls; a ${kind} template has neither (set it on the templates it calls, or spec.serviceAccountName)`,
    );
}

function checkRetry(t: Template, where: string, ctx: TemplateContext): void {
  const r = t.retryStrategy;
  if (!r) return;
  const at = `${where}.retryStrategy`;
  if (r.limit !== undefined) integer(r.limit, `${at}.limit`, 0, ctx);
  if (r.retryPolicy !== undefined && !(RETRY_POLICIES as readonly string[]).includes(r.retryPolicy)) {
    ctx.add(`${at}.retryPolicy`, `must be one of ${RETRY_POLICIES.join(', ')}, got ${JSON.stringify(r.retryPolicy)}`);
  }
  if (r.backoff?.duration !== undefined) duration(r.backoff.duration, `${at}.backoff.duration`, ctx);
  if (r.backoff?.maxDuration !== undefined) duration(r.backoff.maxDuration, `${at}.backoff.maxDuration`, ctx);
  if (r.backoff?.cap !== undefined) duration(r.backoff.cap, `${at}.backoff.cap`, ctx);
  if (r.backoff?.factor !== undefined && !tagged(r.backoff.factor)) {
    try {
      if (intOrStringToFloat(r.backoff.factor, `${at}.backoff.factor`) <= 0) ctx.add(`${at}.backoff.factor`, 'must be positive');
    } catch (err) {
      ctx.add(`${at}.backoff.factor`, detailOf(err, `${at}.backoff.factor`));
    }
  }
  if (r.expression) retryExpression(r.expression, `${at}.expression`, ctx);
}

/** Adds a `field: detail` problem (custom-metrics.ts words them so) as a field error. */
export function addProblem(problem: string, add: (field: string, detail: string) => void): void {
  const at = problem.indexOf(': ');
  add(problem.slice(0, at), problem.slice(at + 2));
}

/** `memoize`: a key, a cache ConfigMap name, and a Go duration for maxAge (memoize.ts uses them). */
function checkMemoize(t: Template, where: string, ctx: TemplateContext): void {
  const m = t.memoize;
  if (!m) return;
  const at = `${where}.memoize`;
  if (typeof m.key !== 'string' || m.key === '') ctx.add(`${at}.key`, 'is required: the cache entry is stored under it');
  const name = m.cache?.configMap?.name;
  if (typeof name !== 'string' || name === '')
    ctx.add(`${at}.cache.configMap.name`, 'is required: the ConfigMap the entries are stored in');
  else if (!DNS_SUBDOMAIN.test(name) || name.length > 253)
    ctx.add(`${at}.cache.configMap.name`, `${JSON.stringify(name)} is not a ConfigMap name (lower case letters, digits, '-' and '.')`);
  if (m.maxAge !== undefined && m.maxAge !== '') {
    try {
      parseGoDuration(m.maxAge, { field: `${at}.maxAge` });
    } catch (err) {
      ctx.add(`${at}.maxAge`, detailOf(err, `${at}.maxAge`));
    }
  }
}

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/**
 * The peer's rule for artifact names: letters, digits, '_' and '-'. plugflow's init and wait
 * containers build file paths from these names (and remove them), so a name with '/' or '..' must
 * never reach a pod.
 */
export const ARTIFACT_NAME = /^[-a-zA-Z0-9_]+$/;

export function artifactNameProblem(name: unknown): string | undefined {
  if (typeof name !== 'string' || name === '') return 'is required';
  if (!ARTIFACT_NAME.test(name)) return `${JSON.stringify(name)} may hold only letters, digits, '_' and '-' (e.g. my_artifact-1)`;
  return undefined;
}

function checkArtifactNames(t: Template, where: string, ctx: TemplateContext): void {
  for (const side of ['inputs', 'outputs'] as const)
    (t[side]?.artifacts ?? []).forEach((a, i) => {
      const problem = artifactNameProblem(a.name);
      if (problem) ctx.add(`${where}.${side}.artifacts[${i}].name`, problem);
    });
}

function checkParameters(t: Template, where: string, ctx: TemplateContext): void {
  checkArtifactNames(t, where, ctx);
  checkParameterValues(t.inputs?.parameters, `${where}.inputs.parameters`, ctx.add);
  checkParameterValues(t.outputs?.parameters, `${where}.outputs.parameters`, ctx.add);
  const inputs = new Set<string>();
  for (const p of t.inputs?.parameters ?? []) {
    const field = `${where}.inputs.parameters[${p.name ?? ''}]`;
    if (!p.name) ctx.add(field, 'needs a name');
    else if (inputs.has(p.name)) ctx.add(field, 'is declared twice');
    inputs.add(p.name);
    if (p.enum && isAnyString(p.default) && p.enum.every(isAnyString) && !p.enum.map(String).includes(String(p.default))) {
      ctx.add(
        `${field}.default`,
        `${JSON.stringify(String(p.default))} is not one of the allowed values ${JSON.stringify(p.enum.map(String))}`,
      );
    }
  }
  const outputs = new Set<string>();
  for (const p of t.outputs?.parameters ?? []) {
    const field = `${where}.outputs.parameters[${p.name ?? ''}]`;
    if (!p.name) ctx.add(field, 'needs a name');
    else if (outputs.has(p.name)) ctx.add(field, 'is declared twice');
    outputs.add(p.name);
    const vf = p.valueFrom;
    if (!vf) continue;
    const sources = (['path', 'parameter', 'expression', 'supplied', 'jsonPath', 'jqFilter', 'configMapKeyRef', 'event'] as const).filter(
      (k) => vf[k] !== undefined,
    );
    if (sources.length > 1) ctx.add(`${field}.valueFrom`, `has more than one source (${sources.join(', ')}); keep one`);
    if (vf.path !== undefined && !t.container && !t.script && !t.containerSet)
      ctx.add(`${field}.valueFrom.path`, 'only works in container, script and containerSet templates');
    if (vf.supplied !== undefined && !t.suspend) ctx.add(`${field}.valueFrom.supplied`, 'only works in suspend templates');
    if (vf.expression !== undefined) expression(vf.expression, `${field}.valueFrom.expression`, ctx);
  }
}

/**
 * Every string of the template (its steps and tasks aside, which validate-calls.ts checks with
 * more context): tags must parse, and `{{inputs.parameters.X}}` must name a declared input.
 */
function checkAllTags(t: Template, where: string, ctx: TemplateContext): void {
  const declared = new Set((t.inputs?.parameters ?? []).map((p) => p.name));
  const { steps: _steps, dag: _dag, ...rest } = t;
  walkStrings(rest, where, (text, field) => {
    const bad = checkTags(text);
    if (bad) ctx.add(field, bad);
    for (const name of tagNames(text)) checkInputRef(name, declared, field, ctx);
  });
}

/**
 * Parameter values (`value`, `default`, `valueFrom.default`, `enum` entries) are AnyString: a
 * string, a number or a boolean. A list or an object cannot be turned into the string a
 * template sees, so it is refused here, naming the field, before anything runs.
 * `at` is the list's field, e.g. `spec.templates[main].steps[0][a].arguments.parameters`.
 */
export function checkParameterValues(
  params: readonly Parameter[] | undefined,
  at: string,
  add: (field: string, detail: string) => void,
): void {
  if (!Array.isArray(params)) return;
  params.forEach((p, i) => {
    if (!p || typeof p !== 'object') return;
    const field = `${at}[${typeof p.name === 'string' && p.name ? p.name : i}]`;
    const check = (value: unknown, sub: string) => {
      if (value === undefined || isAnyString(value)) return;
      try {
        anyStringToString(value, `${field}.${sub}`);
      } catch (err) {
        add(`${field}.${sub}`, detailOf(err, `${field}.${sub}`));
      }
    };
    check(p.value, 'value');
    check(p.default, 'default');
    check(p.valueFrom?.default, 'valueFrom.default');
    const ref: unknown = p.valueFrom?.configMapKeyRef;
    if (ref !== undefined) {
      const r = (ref && typeof ref === 'object' ? ref : {}) as { name?: unknown; key?: unknown };
      for (const k of ['name', 'key'] as const) {
        if (typeof r[k] !== 'string' || r[k] === '') add(`${field}.valueFrom.configMapKeyRef.${k}`, 'is required (a non-empty string)');
      }
    }
    const allowed: unknown = p.enum;
    if (Array.isArray(allowed)) allowed.forEach((e: unknown, j) => check(e, `enum[${j}]`));
    else if (allowed !== undefined) add(`${field}.enum`, 'must be a list of allowed values');
  });
}

export function checkInputRef(name: string, declared: ReadonlySet<string>, field: string, ctx: TemplateContext): void {
  const m = /^inputs\.parameters\.(.+)$/.exec(name);
  if (m && !declared.has(m[1]!)) ctx.add(field, `refers to {{${name}}} but the template declares no input parameter "${m[1]}"`);
}

/** Calls `fn` for every string in `value`, with its field path. */
export function walkStrings(value: unknown, path: string, fn: (text: string, field: string) => void): void {
  if (typeof value === 'string') fn(value, path);
  else if (Array.isArray(value)) value.forEach((v, i) => walkStrings(v, `${path}[${i}]`, fn));
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value))
      walkStrings(v, /^[A-Za-z_][\w-]*$/.test(k) ? `${path}.${k}` : `${path}[${JSON.stringify(k)}]`, fn);
  }
}

export function tagged(v: unknown): boolean {
  return typeof v === 'string' && v.includes('{{');
}

function duration(v: string | number, field: string, ctx: TemplateContext): void {
  if (tagged(v)) return;
  try {
    parseSecondsOrDuration(v, { field });
  } catch (err) {
    ctx.add(field, detailOf(err, field));
  }
}

function integer(v: string | number, field: string, min: number, ctx: TemplateContext): void {
  if (tagged(v)) return;
  try {
    const n = intOrStringToNumber(v, field);
    if (n < min) ctx.add(field, `must be at least ${min}, got ${n}`);
  } catch (err) {
    ctx.add(field, detailOf(err, field));
  }
}

/** A retry expression may hold tags: checked with each tag standing for one literal (expression-tags.ts). */
function retryExpression(text: string, field: string, ctx: TemplateContext): void {
  if (checkTags(text)) return; // a malformed tag is reported with the template's other strings
  let shape: string;
  try {
    shape = substituteExpressionTags(text, () => '0');
  } catch (err) {
    ctx.add(field, errorMessage(err));
    return;
  }
  expression(shape, field, ctx);
}

export function expression(text: string, field: string, ctx: TemplateContext): void {
  const bad = checkExpression(text);
  if (bad) ctx.add(field, bad);
}

/** The detail of a FieldError (without the field, which the caller names again). */
export function detailOf(err: unknown, field: string): string {
  const e = err as { detail?: string; message?: string };
  if (typeof e.detail === 'string') return e.detail;
  const m = e.message ?? String(err);
  return m.startsWith(field) ? m.slice(field.length).replace(/^[:\s]+/, '') : m;
}
