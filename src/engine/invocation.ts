/**
 * What every template executor receives: the node to create or advance, the resolved template,
 * the bound inputs and the clocks that apply. Kept in one small record so the executors have the
 * same shape and the dispatcher (execute-template.ts) stays a switch.
 */
import type { Inputs, NodeStatus, NodeType, TemplateRef } from '../api/index.js';
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
}

export function newNode(seed: NodeSeed, type: NodeType, extra: Partial<NewNode> = {}): NewNode {
  return { ...seed, type, ...extra };
}

/** `spec.templates[main]`, or `WorkflowTemplate "lib" spec.templates[main]`, or `inline template of <node>`. */
export function templateWhere(resolved: ResolvedTemplate, nodeName: string): string {
  if (resolved.templateName === undefined) return `inline template of ${nodeName}`;
  const base = `spec.templates[${resolved.templateName}]`;
  return resolved.scope ? `${resolved.scope.replace('/', ' "')}" ${base}` : base;
}

/** Variables a template body sees: workflow globals and its own inputs. */
export function templateVariables(globals: Vars, inputs: Inputs | undefined): Vars {
  return { ...globals, ...inputVariables(inputs) };
}
