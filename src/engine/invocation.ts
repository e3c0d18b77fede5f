/**
 * What every template executor receives: the node to create or advance, the resolved template,
 * the bound inputs and the clocks that apply. Kept in one small record so the executors have the
 * same shape and the dispatcher (execute-template.ts) stays a switch.
 */
import type { Inputs, NodeStatus, NodeType, Template, TemplateRef } from '../api/index.js';
import type { NewNode } from './engine-run.js';
import type { LeafTiming } from './leaf-deadline.js';
import type { ResolvedTemplate } from './template-resolver.js';
import { inputVariables } from './inputs.js';
import type { Vars } from './variables.js';

export interface NodeSeed {
  name: string;
  displayName?: string;
  boundaryID?: string;
  templateName?: string;
  templateRef?: TemplateRef;
  templateScope?: string;
  inputs: Inputs;
}

export interface Execution {
  seed: NodeSeed;
  resolved: ResolvedTemplate;
  /** The template as users find it in YAML, for messages: `spec.templates[main]`. */
  where: string;
  /** The node if it exists already (not final). */
  existing: NodeStatus | undefined;
  timing: LeafTiming;
  /** Attempt index when this is an attempt of a retried node (`{{retries}}`). */
  retries?: number;
  /**
   * `lastRetry.{exitCode,status,duration,message}` of an attempt: the attempt before it (the
   * first attempt's are `0`, ``, `0`, ``, as the peer gives them).
   */
  lastRetry?: Record<string, string>;
  /** Variables the call site gives the template: `steps.name` or `tasks.name` (see callVariables). */
  local?: Vars;
}

export function newNode(seed: NodeSeed, type: NodeType, extra: Partial<NewNode> = {}): NewNode {
  return { ...seed, type, ...extra };
}

/**
 * `spec.templates[main]`, or `WorkflowTemplate "lib" spec.templates[main]`, or for an inline
 * template where it is written (`spec.templates[main].steps[0][a].inline`, else `inline template of <node>`).
 */
export function templateWhere(resolved: ResolvedTemplate, nodeName: string): string {
  if (resolved.inline) return resolved.inlineWhere ?? `inline template of ${nodeName}`;
  const base = `spec.templates[${resolved.templateName}]`;
  return resolved.scope ? `${resolved.scope.replace('/', ' "')}" ${base}` : base;
}

/**
 * Variables a template body sees: workflow globals, what its call site defines (`steps.name` /
 * `tasks.name`), `node.name`, its own inputs, and the declared paths of its outputs
 * (`outputs.parameters.<p>.path`, `outputs.artifacts.<a>.path`), so a container can be told
 * where to write them.
 */
export function templateVariables(globals: Vars, ex: Pick<Execution, 'seed' | 'resolved' | 'local'>): Vars {
  return {
    ...globals,
    ...ex.local,
    'node.name': ex.seed.name,
    ...inputVariables(ex.seed.inputs),
    ...outputPathVariables(ex.resolved.template),
  };
}

/** `outputs.parameters.<p>.path` and `outputs.artifacts.<a>.path` of the paths `template` declares. */
export function outputPathVariables(template: Template): Vars {
  const vars: Vars = {};
  for (const p of template.outputs?.parameters ?? []) {
    const path = p.valueFrom?.path;
    if (typeof path === 'string' && path !== '') vars[`outputs.parameters.${p.name}.path`] = path;
  }
  for (const a of template.outputs?.artifacts ?? []) {
    if (typeof a.path === 'string' && a.path !== '') vars[`outputs.artifacts.${a.name}.path`] = a.path;
  }
  return vars;
}

/**
 * What a step or DAG task defines for the template it calls, as the peer does: its own name
 * (`steps.name` / `tasks.name`, the name written in the YAML, the same for every loop item).
 */
export function callVariables(kind: 'steps' | 'tasks', name: string | undefined): Vars {
  return name ? { [`${kind}.name`]: name } : {};
}
