/**
 * Validation of a workflow before it runs (and before the REST server stores it).
 *
 * It checks what would otherwise fail half-way through a run: the entrypoint and every template a
 * step, task or hook names exist; required parameters are supplied and values respect `enum`;
 * DAG dependencies name existing tasks and have no cycle; expressions and `{{…}}` tags parse;
 * references to `inputs.parameters`, `steps.X` and `tasks.X` point at something that exists;
 * durations and numbers parse. Each problem is a FieldError whose field names the template and
 * the field: `spec.templates[main].dag.tasks[b].depends names an unknown task "c"`.
 *
 * Shape errors (wrong JSON types, unknown fields) are the CRD schema's and src/api's business;
 * this validator assumes the shape is right and checks meaning.
 *
 * Templates in WorkflowTemplates are checked when `sources` holds them; without `sources`,
 * references into WorkflowTemplates are not checked (the REST server passes what it fetched).
 */
import { metricProblems } from './custom-metrics.js';
import {
  anyStringToString,
  FieldError,
  isAnyString,
  PROTO_KEY_DETAIL,
  protoKeyPath,
  SHUTDOWN_STRATEGIES,
  type Parameter,
  type Template,
  type Workflow,
} from '../api/index.js';
import type { Observations, TemplateSource } from './contract.js';
import { effectiveSpec, type EffectiveSpec } from './effective-spec.js';
import { checkEnum } from './inputs.js';
import { templateDecorator } from './template-defaults.js';
import { checkGCFields } from './workflow-gc.js';
import { checkArtifactGC } from './artifact-gc.js';
import { parseRefspec } from '../api/index.js';
import { checkResourceFields } from './workflow-resources.js';
import { checkPodLevelFields } from './pod-level-fields.js';
import { hookExpressionProblem } from './lifecycle-hooks.js';
import { checkWorkflowMetadata } from './workflow-metadata.js';
import { checkExecutorPlugins, checkExecutorPluginsGate } from './workflow-plugins.js';
import { checkArtifactDrivers } from './artifact-drivers.js';
import { TemplateResolver } from './template-resolver.js';
import { checkReferencedTemplates, checkSpecFields } from './validate-fields.js';
import { canonicalNames } from '../api/index.js';
import { addProblem, artifactNameProblem, checkParameterValues, validateTemplate, type TemplateContext } from './validate-template.js';

/**
 * `merged` is the workflow's effective spec when the caller has it already (the engine merges
 * once per reconcile and hands it here); without it, it is computed from `sources`. `gates`, given
 * by the controller only (it alone knows them), refuses spec.executorPlugins while its gate is off.
 */
export function validateWorkflow(
  workflow: Workflow,
  sources?: Readonly<Record<string, TemplateSource>>,
  merged?: EffectiveSpec,
  gates?: Pick<Observations, 'workflowLevelPluginsEnabled' | 'artifactDrivers'>,
): FieldError[] {
  const errors: FieldError[] = [];
  const add = (field: string, detail: string) => errors.push(new FieldError(field, detail));
  // User JSON (src/api/user-json.ts): a `__proto__` key anywhere stops the workflow before any copy.
  const proto = protoKeyPath(workflow.spec, 'spec') ?? protoKeyPath(workflow.metadata, 'metadata');
  if (proto !== undefined) return [new FieldError(proto, PROTO_KEY_DETAIL)];
  for (const [key, source] of Object.entries(sources ?? {})) {
    const at = protoKeyPath(source, key);
    if (at !== undefined) return [new FieldError(at, PROTO_KEY_DETAIL)];
  }
  // The peer's field names (s3, prometheus, …) read as the spec's (src/api/peer-names.ts); a
  // merged spec was made from objects already renamed (the controller's caches).
  if (!merged) {
    workflow = { ...workflow, spec: canonicalNames(workflow.spec, 'WorkflowSpec') };
    if (sources) sources = canonicalSources(sources);
  }
  const wtr = workflow.spec?.workflowTemplateRef;
  if (wtr && !sources) {
    // The referenced spec is unknown: check only what the workflow itself says.
    checkSpecFields(workflow.spec, add);
    checkExecutorPlugins(workflow.spec, add);
    checkOwnTemplates(workflow.spec.templates ?? [], undefined, add);
    checkParameterValues(workflow.spec.arguments?.parameters, 'spec.arguments.parameters', add);
    return errors;
  }
  const effective = merged ?? effectiveSpec(workflow, sources ?? {});
  if (!effective.ok) {
    add('spec.workflowTemplateRef', effective.error.replace(/^spec\.workflowTemplateRef: /, ''));
    return errors;
  }
  const spec = effective.spec;
  const templates = spec.templates ?? [];
  const resolver = new TemplateResolver(templates, sources ?? {}, templateDecorator(spec));
  const ctx: TemplateContext = { resolver, checkRefs: sources !== undefined, add };
  // Fields plugflow does not implement come first: nothing else matters until they are gone.
  checkSpecFields(spec, add);
  if (gates) checkExecutorPluginsGate(spec, gates, add);
  if (gates?.artifactDrivers) checkArtifactDrivers(spec, gates.artifactDrivers, add);
  if (ctx.checkRefs) checkReferencedTemplates(spec, resolver, add);
  checkOwnTemplates(templates, ctx, add);

  if (!spec.entrypoint) {
    add('spec.entrypoint', 'is required');
  } else {
    const entry = templates.find((t) => t.name === spec.entrypoint);
    if (!entry) add('spec.entrypoint', `names template "${spec.entrypoint}", which does not exist`);
    else checkEntrypointInputs(entry, workflow, spec.arguments?.parameters ?? [], add);
  }

  checkParameterValues(spec.arguments?.parameters, 'spec.arguments.parameters', add);
  const seen = new Set<string>();
  (spec.arguments?.parameters ?? []).forEach((p) => {
    const field = `spec.arguments.parameters[${p.name ?? ''}]`;
    if (!p.name) add(field, 'needs a name');
    else if (seen.has(p.name)) add(field, 'is given twice');
    seen.add(p.name);
    if (p.value === undefined && p.default === undefined && p.valueFrom?.default === undefined && !p.valueFrom?.configMapKeyRef)
      add(`${field}.value`, 'is required');
    // The argument's own enum (the peer's UI offers it as a choice) binds its value too.
    const raw = p.value ?? p.default ?? p.valueFrom?.default;
    if (p.name && Array.isArray(p.enum) && isAnyString(raw) && !anyStringToString(raw).includes('{{')) {
      const bad = checkEnum(p, anyStringToString(raw), field);
      if (bad) add(field, bad.slice(bad.indexOf(': ') + 2));
    }
  });

  (spec.arguments?.artifacts ?? []).forEach((a, i) => {
    const problem = artifactNameProblem(a.name);
    if (problem) add(`spec.arguments.artifacts[${i}].name`, problem);
  });
  checkGCFields(spec, add);
  for (const problem of metricProblems(spec.metrics as never, 'spec.metrics')) addProblem(problem, add);
  checkArtifactGC(spec, add);
  for (const t of spec.templates ?? [])
    for (const a of t.inputs?.artifacts ?? [])
      for (const [i, r] of (a.git?.fetch ?? []).entries()) {
        try {
          parseRefspec(r);
        } catch (err) {
          add(`spec.templates[${t.name}].inputs.artifacts[${a.name}].git.fetch[${i}]`, (err as Error).message);
        }
      }
  checkResourceFields(spec, add);
  checkPodLevelFields(spec, 'spec', add);
  checkExecutorPlugins(spec, add);
  checkWorkflowMetadata(spec, add);
  if (spec.onExit !== undefined && spec.hooks?.exit) add('spec.onExit', 'and spec.hooks.exit are both set; keep one');
  if (spec.onExit !== undefined && !templates.some((t) => t.name === spec.onExit))
    add('spec.onExit', `names template "${spec.onExit}", which does not exist`);
  for (const [key, hook] of Object.entries(spec.hooks ?? {})) {
    const problem = hookExpressionProblem(key, hook);
    if (problem) add(`spec.hooks.${key}${problem[0]}`, problem[1]);
    checkParameterValues(hook.arguments?.parameters, `spec.hooks.${key}.arguments.parameters`, add);
    const res = resolver.resolve(
      {
        ...(hook.template !== undefined ? { template: hook.template } : {}),
        ...(hook.templateRef ? { templateRef: hook.templateRef } : {}),
      },
      undefined,
    );
    if (!res.ok && (hook.templateRef === undefined || ctx.checkRefs)) add(`spec.hooks.${key}`, res.error);
  }
  if (spec.parallelism !== undefined && !(Number.isInteger(spec.parallelism) && spec.parallelism >= 1)) {
    add('spec.parallelism', `must be a whole number of at least 1, got ${JSON.stringify(spec.parallelism)}`);
  }
  if (spec.activeDeadlineSeconds !== undefined && !(Number.isInteger(spec.activeDeadlineSeconds) && spec.activeDeadlineSeconds > 0)) {
    add('spec.activeDeadlineSeconds', `must be a positive whole number of seconds, got ${JSON.stringify(spec.activeDeadlineSeconds)}`);
  }
  if (spec.shutdown !== undefined && spec.shutdown !== '' && !(SHUTDOWN_STRATEGIES as readonly string[]).includes(spec.shutdown)) {
    add('spec.shutdown', `must be one of ${SHUTDOWN_STRATEGIES.join(', ')}, got ${JSON.stringify(spec.shutdown)}`);
  }
  return errors;
}

function checkOwnTemplates(templates: readonly Template[], ctx: TemplateContext | undefined, add: (f: string, d: string) => void): void {
  const names = new Set<string>();
  templates.forEach((t, i) => {
    if (!t.name) {
      add(`spec.templates[${i}].name`, 'is required');
      return;
    }
    if (names.has(t.name)) add(`spec.templates[${t.name}]`, 'is defined twice (template names must be unique)');
    names.add(t.name);
    if (ctx) validateTemplate(t, `spec.templates[${t.name}]`, undefined, ctx);
  });
}

/** The workflow's arguments must supply every entrypoint input without a value or default. */
function checkEntrypointInputs(
  entry: Template,
  workflow: Workflow,
  args: ReadonlyArray<{ name: string; value?: unknown; default?: unknown; valueFrom?: Parameter['valueFrom'] }>,
  add: (f: string, d: string) => void,
): void {
  void workflow;
  for (const p of entry.inputs?.parameters ?? []) {
    const arg = args.find((a) => a.name === p.name);
    // A ConfigMap value is only known when the workflow runs (parameter-config-maps.ts).
    if (arg?.valueFrom?.configMapKeyRef || (!arg && p.valueFrom?.configMapKeyRef)) continue;
    const raw = arg?.value ?? arg?.default ?? arg?.valueFrom?.default ?? p.value ?? p.default ?? p.valueFrom?.default;
    if (raw === undefined) {
      add(
        `spec.arguments.parameters`,
        `is missing "${p.name}", which the entrypoint template "${entry.name}" requires (inputs.parameters[${p.name}] has no default)`,
      );
      continue;
    }
    let value: string;
    try {
      value = anyStringToString(raw);
    } catch {
      continue;
    }
    if (value.includes('{{')) continue;
    const bad = checkEnum(
      p,
      value,
      arg ? `spec.arguments.parameters[${p.name}]` : `spec.templates[${entry.name}].inputs.parameters[${p.name}]`,
    );
    if (bad) {
      const i = bad.indexOf(': ');
      add(bad.slice(0, i), bad.slice(i + 2));
    }
  }
}

/** Template sources with the peer's field names read as the spec's. */
function canonicalSources(sources: Readonly<Record<string, TemplateSource>>): Record<string, TemplateSource> {
  const out: Record<string, TemplateSource> = {};
  for (const [key, source] of Object.entries(sources))
    out[key] = {
      ...source,
      templates: source.templates.map((t) => canonicalNames(t, 'Template')),
      ...(source.spec ? { spec: canonicalNames(source.spec, 'WorkflowSpec') } : {}),
    };
  return out;
}
