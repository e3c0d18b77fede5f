/**
 * Building ExecuteTemplateReply values: one line per answer in a plugin, and the requeue rule
 * (only a Pending/Running node may ask to be called again) enforced by the types.
 */
import type { ExecuteTemplateReply, Outputs } from '../api/index.js';

export interface Details {
  outputs?: Outputs;
  /** `done/total`, e.g. `1/3`. */
  progress?: string;
}

export interface Later extends Details {
  /** Call again after this long: `30s`, `2m`, `1h30m`, `500ms`. */
  requeue?: string;
}

function node(
  phase: 'Succeeded' | 'Failed' | 'Running' | 'Pending',
  message: string | undefined,
  d: Details,
): ExecuteTemplateReply['node'] {
  return {
    phase,
    ...(message !== undefined ? { message } : {}),
    ...(d.outputs ? { outputs: d.outputs } : {}),
    ...(d.progress !== undefined ? { progress: d.progress } : {}),
  };
}

export function succeeded(message?: string, d: Details = {}): ExecuteTemplateReply {
  return { node: node('Succeeded', message, d) };
}

export function failed(message: string, d: Details = {}): ExecuteTemplateReply {
  return { node: node('Failed', message, d) };
}

/** Still working; with `requeue`, the agent calls again after that long. */
export function running(message?: string, d: Later = {}): ExecuteTemplateReply {
  return { node: node('Running', message, d), ...(d.requeue ? { requeue: d.requeue } : {}) };
}

export function pending(message?: string, d: Later = {}): ExecuteTemplateReply {
  return { node: node('Pending', message, d), ...(d.requeue ? { requeue: d.requeue } : {}) };
}

/** `{name: value}` → output parameters, in the order given. */
export function outputParameters(values: Record<string, string>): Outputs {
  return { parameters: Object.entries(values).map(([name, value]) => ({ name, value })) };
}
