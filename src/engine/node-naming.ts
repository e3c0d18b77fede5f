/**
 * Node names, node ids and pod names.
 *
 * Every node has a human-readable *name* that encodes its path in the workflow, in the shape
 * users of the peer system know:
 *
 *   wf                         the root node (the entrypoint)
 *   wf[0]                      the first step group of a steps template
 *   wf[0].build                step `build` in that group
 *   wf[0].build(1:b)           second item of a looped step
 *   wf.build                   DAG task `build`
 *   wf.build(0)                first attempt of a retried node
 *   wf.onExit                  the workflow's exit handler
 *   wf[0].build.onExit         the exit hook of a step
 *   wf.hooks.running           the workflow's lifecycle hook `running`
 *   wf[0].build.hooks.done     lifecycle hook `done` of a step
 *
 * The *id* is derived from the name alone (a hash), so the same node always gets the same id and
 * the same pod name, reconcile after reconcile and across controller restarts. That is what makes
 * a repeated `createPod` harmless: the second create meets AlreadyExists.
 */

/** FNV-1a, 32 bit. Small, stable across platforms and versions, good enough to spread names. */
export function fnv1a32(text: string): number {
  let hash = 0x811c9dc5;
  // Over the UTF-8 bytes of the text, encoded here instead of through a TextEncoder: this runs for
  // every node looked up in every reconcile, and the encoder's buffer was most of its cost.
  const step = (byte: number): void => {
    hash = Math.imul(hash ^ byte, 0x01000193) >>> 0;
  };
  for (let i = 0; i < text.length; i++) {
    let c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const low = text.charCodeAt(i + 1);
      if (low >= 0xdc00 && low <= 0xdfff) {
        c = 0x10000 + ((c - 0xd800) << 10) + (low - 0xdc00);
        i++;
      }
    }
    // A lone surrogate is U+FFFD in UTF-8, as TextEncoder writes it.
    if (c >= 0xd800 && c <= 0xdfff) c = 0xfffd;
    if (c < 0x80) step(c);
    else if (c < 0x800) {
      step(0xc0 | (c >> 6));
      step(0x80 | (c & 0x3f));
    } else if (c < 0x10000) {
      step(0xe0 | (c >> 12));
      step(0x80 | ((c >> 6) & 0x3f));
      step(0x80 | (c & 0x3f));
    } else {
      step(0xf0 | (c >> 18));
      step(0x80 | ((c >> 12) & 0x3f));
      step(0x80 | ((c >> 6) & 0x3f));
      step(0x80 | (c & 0x3f));
    }
  }
  return hash >>> 0;
}

/** Node id: the workflow name for the root node, `<workflow>-<hash of the node name>` otherwise. */
export function nodeIdFor(workflowName: string, nodeName: string): string {
  if (nodeName === workflowName) return workflowName;
  return `${workflowName}-${fnv1a32(nodeName)}`;
}

/** Longest pod name we generate: a pod's hostname is its name and must fit in a DNS label. */
export const MAX_POD_NAME_LENGTH = 63;

/**
 * Pod name of a node: `<workflow>-<template>-<hash of the node name>`, shortened from the left
 * part when too long. Readable in `kubectl get pods`, and deterministic.
 */
export function podNameFor(workflowName: string, nodeName: string, templateName: string | undefined): string {
  const hash = String(fnv1a32(nodeName));
  const tmpl = sanitizeDnsLabel(templateName ?? '');
  let prefix = tmpl ? `${workflowName}-${tmpl}` : workflowName;
  const room = MAX_POD_NAME_LENGTH - hash.length - 1;
  if (prefix.length > room) prefix = prefix.slice(0, room);
  prefix = prefix.replace(/[-.]+$/, '');
  return prefix ? `${prefix}-${hash}` : hash;
}

/** Lower-cases and replaces anything outside `[a-z0-9-]` so a template name can be part of a pod name. */
function sanitizeDnsLabel(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '');
}

/** `wf[2]`: the step group with index `index` of the steps node `parentName`. */
export function stepGroupName(parentName: string, index: number): string {
  return `${parentName}[${index}]`;
}

/** `wf[0].build`: a step of a group. */
export function stepName(groupName: string, step: string): string {
  return `${groupName}.${step}`;
}

/** `wf.build`: a task of a DAG node. */
export function taskName(dagName: string, task: string): string {
  return `${dagName}.${task}`;
}

/** `wf.build(1:b)`: the expansion of one loop item. */
export function loopItemName(baseName: string, index: number, item: unknown): string {
  return `${baseName}(${index}:${itemLabel(item)})`;
}

/** `wf.build(2)`: attempt `attempt` (0-based) of a retried node. */
export function retryAttemptName(retryNodeName: string, attempt: number): string {
  return `${retryNodeName}(${attempt})`;
}

/** `wf.onExit` / `wf[0].build.onExit`: the exit handler or exit hook of a node. */
export function exitHookName(ownerName: string): string {
  return `${ownerName}.onExit`;
}

/** `wf.hooks.running` / `wf[0].build.hooks.running`: the lifecycle hook `key` of a node (or the workflow). */
export function lifecycleHookName(ownerName: string, key: string): string {
  return `${ownerName}.hooks.${key}`;
}

/**
 * How an item appears inside a node name: strings as they are, numbers and booleans printed,
 * objects as `key:value` pairs in key order (so the name does not depend on JSON key order),
 * lists as JSON.
 */
export function itemLabel(item: unknown): string {
  if (item === null || item === undefined) return 'null';
  if (typeof item === 'string') return item;
  if (typeof item === 'number' || typeof item === 'boolean') return String(item);
  if (Array.isArray(item)) return JSON.stringify(item);
  const entries = Object.entries(item as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return entries.map(([k, v]) => `${k}:${typeof v === 'string' ? v : JSON.stringify(v)}`).join(',');
}

/** The display name of a node: the last segment of its name, as the UI and CLI show it. */
export function displayNameOf(nodeName: string, workflowName: string): string {
  if (nodeName === workflowName) return workflowName;
  // The last segment starts after the last `.` or at the last `[` that is outside parentheses.
  let depth = 0;
  for (let i = nodeName.length - 1; i >= 0; i--) {
    const ch = nodeName[i];
    if (ch === ')') depth++;
    else if (ch === '(') depth--;
    else if (depth === 0 && ch === '.') return nodeName.slice(i + 1);
    else if (depth === 0 && ch === '[') return nodeName.slice(i);
  }
  return nodeName;
}
