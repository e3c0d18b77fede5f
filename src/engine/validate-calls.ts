/**
 * Validation of the calls a steps or DAG template makes: names, what they run, their arguments
 * against the callee's inputs, loops, `when`, hooks, references between steps/tasks, and for a
 * DAG the dependency graph (unknown tasks, cycles, targets).
 */
import { anyStringToString, isAnyString, type DAGTask, type Template, type WorkflowStep } from '../api/index.js';
import type { CallSite } from './call-expansion.js';
import { ancestors, buildDagGraph, findCycle, parseTargets } from './dag-graph.js';
import { dependsText } from './dag-depends.js';
import { checkTags, checkWhen, compileDependsText, tagNames } from './expressions.js';
import { checkEnum } from './inputs.js';
import { hookExpressionProblem } from './lifecycle-hooks.js';
import {
  checkInputRef,
  checkParameterValues,
  detailOf,
  tagged,
  validateTemplate,
  walkStrings,
  type TemplateContext,
} from './validate-template.js';

/**
 * Most tasks in one DAG template and steps in one steps template (all groups together). Above
 * them the template is refused at validation, before any per-call check runs, so the work of
 * validating (and of running) one template is bounded whatever a submitter sends. Well above
 * what hand-written templates use; fan-out belongs in withItems/withParam loops, which are not
 * counted here. The peer's CRD bounds these lists too (its MaxItems markers exist to bound
 * validation cost).
 */
export const MAX_DAG_TASKS = 1000;
export const MAX_STEPS = 1000;

export function validateSteps(t: Template, where: string, scope: string | undefined, ctx: TemplateContext): void {
  const count = (t.steps ?? []).reduce((n, group) => n + (Array.isArray(group) ? group.length : 0), 0);
  if (count > MAX_STEPS) {
    ctx.add(
      `${where}.steps`,
      `has ${count} steps; a steps template may have at most ${MAX_STEPS} (use withItems/withParam for fan-out, or split it into several templates)`,
    );
    return;
  }
  const declared = new Set((t.inputs?.parameters ?? []).map((p) => p.name));
  const names = new Set<string>();
  const all = new Set((t.steps ?? []).flat().map((s) => s.name ?? ''));
  const earlier = new Set<string>();
  (t.steps ?? []).forEach((group, gi) => {
    const inGroup: string[] = [];
    (group ?? []).forEach((step: WorkflowStep, si) => {
      const at = `${where}.steps[${gi}][${step.name ?? si}]`;
      if (!step.name) ctx.add(at, 'needs a name');
      else if (names.has(step.name)) ctx.add(at, `has the name "${step.name}" used by another step; step names must be unique`);
      if (step.name) names.add(step.name);
      inGroup.push(step.name ?? '');
      validateCall(step, at, scope, ctx, (ref, field) => {
        if (ref === 'steps.name') return; // the step's own name (callVariables)
        if (ref.startsWith('steps.')) {
          const target = ref.split('.')[1] ?? '';
          if (!earlier.has(target)) {
            ctx.add(
              field,
              all.has(target)
                ? `refers to {{${ref}}} but step "${target}" does not run before this one (only steps of earlier groups can be used)`
                : `refers to {{${ref}}} but there is no step "${target}"`,
            );
          }
        } else checkInputRef(ref, declared, field, ctx);
      });
    });
    for (const n of inGroup) earlier.add(n);
  });
  checkOutputRefs(t, where, 'steps', names, ctx);
}

export function validateDag(t: Template, where: string, scope: string | undefined, ctx: TemplateContext): void {
  const tasks = t.dag?.tasks ?? [];
  if (tasks.length > MAX_DAG_TASKS) {
    ctx.add(
      `${where}.dag.tasks`,
      `has ${tasks.length} tasks; a DAG template may have at most ${MAX_DAG_TASKS} (use withItems/withParam for fan-out, or split it into several templates)`,
    );
    return;
  }
  const declared = new Set((t.inputs?.parameters ?? []).map((p) => p.name));
  const names = new Set<string>();
  tasks.forEach((task, i) => {
    const at = `${where}.dag.tasks[${task.name ?? i}]`;
    if (!task.name) ctx.add(at, 'needs a name');
    else if (names.has(task.name)) ctx.add(at, 'is defined twice (task names must be unique)');
    names.add(task.name);
  });
  const deps = new Map<string, string[]>();
  for (const task of tasks) {
    const at = `${where}.dag.tasks[${task.name}]`;
    if (task.dependencies && task.depends) ctx.add(at, 'has both dependencies and depends; use one');
    for (const d of task.dependencies ?? []) if (!names.has(d)) ctx.add(`${at}.dependencies`, `names an unknown task "${d}"`);
    let found: string[] = [];
    const text = dependsText(task);
    if (text !== undefined) {
      try {
        found = [...compileDependsText(text, `${at}.depends`).names];
      } catch (err) {
        ctx.add(`${at}.depends`, detailOf(err, `${at}.depends`));
      }
    }
    if (task.depends) for (const d of found) if (!names.has(d)) ctx.add(`${at}.depends`, `names an unknown task "${d}"`);
    deps.set(
      task.name,
      found.filter((d) => names.has(d)),
    );
  }
  const graph = buildDagGraph(tasks.map((x) => ({ name: x.name, dependsOn: deps.get(x.name) ?? [] })));
  const cycle = findCycle(graph);
  if (cycle) ctx.add(`${where}.dag.tasks`, `have a dependency cycle: ${cycle.join(' → ')}`);
  if (t.dag?.target && !tagged(t.dag.target)) {
    for (const target of parseTargets(t.dag.target))
      if (!names.has(target)) ctx.add(`${where}.dag.target`, `names an unknown task "${target}"`);
  }
  // Whether a task runs after another: answered from per-task bit sets built in topological
  // order (linear in the graph, no recursion); only asked when there is no cycle.
  const runsAfter = cycle ? undefined : ancestors(graph);
  for (const task of tasks) {
    const at = `${where}.dag.tasks[${task.name}]`;
    validateCall(task as DAGTask & CallSite, at, scope, ctx, (ref, field) => {
      if (ref === 'tasks.name') return; // the task's own name (callVariables)
      if (ref.startsWith('tasks.')) {
        const target = ref.split('.')[1] ?? '';
        if (!names.has(target)) ctx.add(field, `refers to {{${ref}}} but there is no task "${target}"`);
        else if (runsAfter && !runsAfter(task.name, target))
          ctx.add(field, `refers to {{${ref}}} but task "${target}" is not among the tasks "${task.name}" depends on`);
      } else checkInputRef(ref, declared, field, ctx);
    });
  }
  checkOutputRefs(t, where, 'tasks', names, ctx);
}

/** Checks shared by steps and tasks; `onRef` judges each `{{name}}` used in the call's fields. */
function validateCall(
  site: CallSite,
  at: string,
  scope: string | undefined,
  ctx: TemplateContext,
  onRef: (ref: string, field: string) => void,
): void {
  const refs = [site.template !== undefined, site.templateRef !== undefined, site.inline !== undefined].filter(Boolean).length;
  if (refs !== 1) ctx.add(at, 'must have exactly one of template, templateRef or inline');
  const loops = [site.withItems, site.withParam, site.withSequence].filter((x) => x !== undefined).length;
  if (loops > 1) ctx.add(at, 'has more than one of withItems, withParam, withSequence; keep one');
  const seq = site.withSequence;
  if (seq && seq.count !== undefined && seq.end !== undefined) ctx.add(`${at}.withSequence`, 'has both count and end; keep one');
  if (seq && seq.count === undefined && seq.end === undefined) ctx.add(`${at}.withSequence`, 'needs count or end');
  const looped = loops > 0;
  checkParameterValues(site.arguments?.parameters, `${at}.arguments.parameters`, ctx.add);
  if (site.when && !checkTags(site.when)) {
    // Malformed tags are reported with the other strings below; here the condition itself.
    const bad = checkWhen(site.when);
    if (bad) ctx.add(`${at}.when`, bad);
  }
  const { inline, hooks, ...fields } = site;
  walkStrings(fields, at, (text, field) => {
    const bad = checkTags(text);
    if (bad) ctx.add(field, bad);
    for (const name of tagNames(text)) {
      if (name === 'item' || name.startsWith('item.')) {
        if (!looped) ctx.add(field, `uses {{${name}}} but the step has no withItems, withParam or withSequence`);
      } else onRef(name, field);
    }
  });
  for (const [key, hook] of Object.entries(hooks ?? {})) {
    const problem = hookExpressionProblem(key, hook);
    if (problem) ctx.add(`${at}.hooks.${key}${problem[0]}`, problem[1]);
    checkParameterValues(hook.arguments?.parameters, `${at}.hooks.${key}.arguments.parameters`, ctx.add);
    checkCallee(
      {
        ...(hook.template !== undefined ? { template: hook.template } : {}),
        ...(hook.templateRef ? { templateRef: hook.templateRef } : {}),
        ...(hook.arguments ? { arguments: hook.arguments } : {}),
      },
      `${at}.hooks.${key}`,
      scope,
      ctx,
    );
  }
  if (site.onExit !== undefined) checkCallee({ template: site.onExit }, `${at}.onExit`, scope, ctx);
  if (inline) validateTemplate(inline, `${at}.inline`, scope, ctx);
  if (refs === 1) checkCallee(site, at, scope, ctx);
}

/** The callee exists, and the call supplies its required inputs with allowed values. */
function checkCallee(site: CallSite, at: string, scope: string | undefined, ctx: TemplateContext): void {
  if (site.templateRef && !ctx.checkRefs) return;
  const res = ctx.resolver.resolve(
    {
      ...(site.template !== undefined ? { template: site.template } : {}),
      ...(site.templateRef ? { templateRef: site.templateRef } : {}),
      ...(site.inline ? { inline: site.inline, ...(site.name ? { inlineName: site.name } : {}) } : {}),
    },
    scope,
  );
  if (!res.ok) {
    ctx.add(
      site.templateRef ? `${at}.templateRef` : `${at}.template`,
      res.error.replace(/^template (".*") not found/, 'names template $1, which does not exist'),
    );
    return;
  }
  if (res.value.template.daemon === true && (site.hooks?.exit || site.onExit !== undefined)) {
    ctx.add(
      site.onExit !== undefined ? `${at}.onExit` : `${at}.hooks.exit`,
      'calls a daemon template, which runs until its steps or DAG end, so the exit hook would never run; put it on the step that calls those steps',
    );
  }
  const callee = res.value.template;
  for (const p of callee.inputs?.parameters ?? []) {
    const arg = site.arguments?.parameters?.find((a) => a.name === p.name);
    if (!arg) {
      if (p.value === undefined && p.default === undefined && p.valueFrom?.default === undefined && !p.valueFrom?.configMapKeyRef) {
        ctx.add(`${at}.arguments.parameters`, `is missing "${p.name}", which template "${callee.name}" requires (it has no default)`);
      }
      continue;
    }
    const raw = arg.value ?? arg.valueFrom?.default;
    if (raw === undefined || !isAnyString(raw)) continue; // a list or object is reported by checkParameterValues
    const value = anyStringToString(raw);
    if (value.includes('{{')) continue;
    const bad = checkEnum(p, value, `${at}.arguments.parameters[${p.name}]`);
    if (bad) {
      const i = bad.indexOf(': ');
      ctx.add(bad.slice(0, i), bad.slice(i + 2));
    }
  }
}

/** `{{steps.X…}}` / `{{tasks.X…}}` in the template's outputs must name an existing step or task. */
function checkOutputRefs(t: Template, where: string, prefix: 'steps' | 'tasks', names: ReadonlySet<string>, ctx: TemplateContext): void {
  walkStrings(t.outputs ?? {}, `${where}.outputs`, (text, field) => {
    for (const name of tagNames(text)) {
      if (!name.startsWith(`${prefix}.`) || name === `${prefix}.name`) continue;
      const target = name.split('.')[1] ?? '';
      if (!names.has(target)) ctx.add(field, `refers to {{${name}}} but there is no ${prefix === 'steps' ? 'step' : 'task'} "${target}"`);
    }
  });
}
