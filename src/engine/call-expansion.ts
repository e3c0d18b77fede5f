/**
 * Turning one step or DAG task into the calls it makes: one call, or one per loop item.
 *
 * Expansion (loop source substitution and parsing) happens on every reconcile — it is cheap and
 * deterministic, since it only reads finished nodes' outputs. Preparing a call (evaluating `when`,
 * substituting `arguments`) happens only for a call whose node does not exist yet, so a started
 * node is never re-decided.
 */
import {
  setOwn,
  type Arguments,
  type ContinueOn,
  type LifecycleHooks,
  type Sequence,
  type Template,
  type TemplateRef,
} from '../api/index.js';
import { resolveFromExpressions } from './artifacts.js';
import { evaluateWhenText, renderString, renderValue, valueSource } from './expressions.js';
import { expandLoop, isLooped, itemVariables, LoopError } from './loop-items.js';
import { DEFAULT_MAX_LOOP_ITEMS } from './sequence.js';
import { itemLabel, loopItemName } from './node-naming.js';
import { absentArguments } from './skipped-outputs.js';
import type { TemplateReference } from './template-resolver.js';
import type { Vars } from './variables.js';
import { errorMessage } from '../log/error-message.js';

/** The fields steps and DAG tasks share. */
export interface CallSite {
  name?: string;
  template?: string;
  templateRef?: TemplateRef;
  inline?: Template;
  arguments?: Arguments;
  when?: string;
  withItems?: unknown[];
  withParam?: string;
  withSequence?: Sequence;
  continueOn?: ContinueOn;
  hooks?: LifecycleHooks;
  onExit?: string;
}

export type PreparedCall =
  | { kind: 'run'; ref: TemplateReference; args: Arguments; absent?: string[] }
  | { kind: 'skip'; message: string }
  | { kind: 'error'; message: string };

export interface ExpandedCall {
  name: string;
  displayName: string;
  /** Variables of this call (the caller's plus `item…`). */
  vars: Vars;
  /** What the call runs (needed to advance a node that already exists). */
  ref: TemplateReference;
  /** Variables the call gives the template it runs (`steps.name` / `tasks.name`). */
  local: Vars;
  /** Evaluates `when` and substitutes `arguments`: only for a call that has no node yet. */
  prepare(): PreparedCall;
}

export type Expansion = { ok: true; looped: boolean; calls: ExpandedCall[] } | { ok: false; error: string };

/** Every call of a step or task (expandLazily's, all built). */
export function expandCalls(...args: Parameters<typeof expandLazily>): Expansion {
  const lazy = expandLazily(...args);
  if (!lazy.ok) return lazy;
  return { ok: true, looped: lazy.looped, calls: Array.from({ length: lazy.count }, (_, i) => lazy.at(i)) };
}

export type LazyExpansion = { ok: true; looped: boolean; count: number; at(i: number): ExpandedCall } | { ok: false; error: string };

/**
 * The calls of a step or task: one, or one per item of its loop; `at(i)` builds the i-th when
 * asked. A reconcile of a loop of 100,000 items asks for the few whose nodes still run or start
 * (execute-steps.ts, started-items.ts).
 *
 * @param site the step or task
 * @param baseName node name of the step/task (`wf[0].a`, `wf.a`)
 * @param outer the variables the step/task sees
 * @param where field path of the step/task for messages, e.g. `spec.templates[main].steps[0][a]`
 * @param local variables the called template sees (callVariables: `steps.name` / `tasks.name`)
 * @param maxItems the loop guard (Observations.maxLoopItems)
 */
export function expandLazily(
  site: CallSite,
  baseName: string,
  outer: Vars,
  where: string,
  local: Vars = {},
  maxItems = DEFAULT_MAX_LOOP_ITEMS,
): LazyExpansion {
  const displayBase = site.name ?? baseName;
  // The step's own fields (arguments, when, loops) see its name too: `{{steps.name}}` there is
  // this step, as the peer resolves it for a top-level steps template.
  const vars = { ...outer, ...local };
  if (!isLooped(site)) {
    const only = call(site, baseName, displayBase, () => vars, where, local, referenceOf(site, where));
    return { ok: true, looped: false, count: 1, at: () => only };
  }
  let items: unknown[];
  try {
    items = expandLoop(
      {
        ...(site.withItems !== undefined ? { withItems: renderValue(site.withItems, vars, `${where}.withItems`) } : {}),
        ...(site.withParam !== undefined ? { withParam: renderString(site.withParam, vars, `${where}.withParam`) } : {}),
        ...(site.withSequence !== undefined ? { withSequence: renderValue(site.withSequence, vars, `${where}.withSequence`) } : {}),
      },
      maxItems,
    );
  } catch (err) {
    const field = err instanceof LoopError ? `${where}.${err.field}: ` : '';
    return { ok: false, error: `${field}${errorMessage(err)}` };
  }
  // An item's variables are built when they are read (when its call starts, or its hooks run):
  // a reconcile of a loop of 100,000 items mostly looks its finished items up by name.
  const ref = referenceOf(site, where);
  const reads = plainReads(site);
  const at = (i: number): ExpandedCall => {
    const item = items[i];
    return call(
      site,
      loopItemName(baseName, i, item),
      `${displayBase}(${i}:${itemLabel(item)})`,
      () => (reads ? picked(vars, reads, itemVariables(item)) : { ...vars, ...itemVariables(item) }),
      where,
      local,
      ref,
    );
  };
  return { ok: true, looped: true, count: items.length, at };
}

/** What a step or task runs, as a TemplateReference (`where`: the step's field path). */
export function referenceOf(site: CallSite, where: string): TemplateReference {
  const ref: TemplateReference = {};
  if (site.template !== undefined) ref.template = site.template;
  if (site.templateRef !== undefined) ref.templateRef = site.templateRef;
  if (site.inline !== undefined) {
    ref.inline = site.inline;
    if (site.name) ref.inlineName = site.name;
    ref.inlineWhere = `${where}.inline`;
  }
  return ref;
}

function call(
  site: CallSite,
  name: string,
  displayName: string,
  varsOf: () => Vars,
  where: string,
  local: Vars,
  ref: TemplateReference,
): ExpandedCall {
  let built: Vars | undefined;
  return {
    name,
    displayName,
    get vars() {
      return (built ??= varsOf());
    },
    ref,
    local,
    prepare(): PreparedCall {
      const vars = this.vars;
      try {
        if (site.when !== undefined && site.when !== '') {
          const { result, rendered } = evaluateWhenText(site.when, vars, `${where}.when`);
          if (!result) return { kind: 'skip', message: `when ${JSON.stringify(rendered)} evaluated false` };
        }
        const absent = absentArguments(site.arguments, vars);
        const given = absent.length === 0 ? site.arguments : withoutParameters(site.arguments!, absent);
        const rendered = given ? renderValue(given, vars, `${where}.arguments`) : {};
        const args = resolveFromExpressions(rendered, valueSource(vars), where);
        return { kind: 'run', ref, args, ...(absent.length > 0 ? { absent } : {}) };
      } catch (err) {
        return { kind: 'error', message: errorMessage(err) };
      }
    },
  };
}

/**
 * The variables a loop item's call reads, when the site's own fields use only plain tags
 * (`{{item}}`, `{{tasks.a.outputs.result}}`): each item then gets those and its own variables,
 * not a copy of everything in scope (a DAG of 100 tasks has hundreds, and a reconcile may start
 * 5,000 items). Undefined when the site needs them all: a `when`, an expression (`{{=…}}`,
 * `fromExpression`), or hooks and exit handlers, which are given the item's variables.
 */
function plainReads(site: CallSite): readonly string[] | undefined {
  if (site.when !== undefined || site.hooks !== undefined || site.onExit !== undefined) return undefined;
  if (site.arguments?.artifacts?.some((a) => a.fromExpression !== undefined)) return undefined;
  const known = reads.get(site);
  if (known !== undefined) return known ?? undefined;
  const names = new Set<string>();
  const found = site.arguments === undefined || tagsOf(site.arguments, names);
  const out = found ? [...names] : null;
  reads.set(site, out);
  return out ?? undefined;
}

const reads = new WeakMap<CallSite, readonly string[] | null>();

/** Adds the names of the plain tags in every string of `value` to `into`; false on an expression or a malformed tag. */
function tagsOf(value: unknown, into: Set<string>): boolean {
  if (typeof value === 'string') {
    // As compileTemplate (expr/template.ts) reads tags: `{{` up to the next `}}`, trimmed.
    for (let i = value.indexOf('{{'); i >= 0; i = value.indexOf('{{', i)) {
      let j = i + 2;
      while (j < value.length && /\s/.test(value[j]!)) j++;
      if (value[j] === '=') return false;
      const close = value.indexOf('}}', i + 2);
      if (close < 0) return false;
      into.add(value.slice(i + 2, close).trim());
      i = close + 2;
    }
    return true;
  }
  if (Array.isArray(value)) return value.every((v) => tagsOf(v, into));
  if (value !== null && typeof value === 'object') return Object.values(value).every((v) => tagsOf(v, into));
  return true;
}

/** `names` of `vars` (those it has), then `own` over them. */
function picked(vars: Vars, names: readonly string[], own: Vars): Vars {
  const out: Vars = {};
  for (const n of names) if (Object.hasOwn(vars, n)) setOwn(out, n, vars[n]);
  for (const k of Object.keys(own)) setOwn(out, k, own[k]);
  return out;
}

/** `args` without the parameters named in `names`. */
function withoutParameters(args: Arguments, names: readonly string[]): Arguments {
  return { ...args, parameters: (args.parameters ?? []).filter((p) => !names.includes(p.name)) };
}

/** Whether `continueOn` lets the caller go on after a node ended in `phase`. */
export function continuesOn(site: CallSite, phase: string): boolean {
  return (phase === 'Failed' && site.continueOn?.failed === true) || (phase === 'Error' && site.continueOn?.error === true);
}
