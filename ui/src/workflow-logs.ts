/**
 * The workflow-wide log view's logic: which pods' logs it reads (bounded), and which lines it
 * shows for a filter, with the matches marked. Pure: tested beside.
 *
 * Every pod of the workflow is one stream of the per-pod log route; a workflow can have
 * thousands of pods, so the view reads the first MAX_PODS (by start) and keeps at most
 * OPEN_AT_ONCE streams open at a time (a browser allows six connections per server over
 * HTTP/1.1, and the live workflow stream needs one).
 */
import { logSource } from './log-source.js';
import type { NodeStatus, Workflow } from './types.js';

export const MAX_PODS = 30;
export const OPEN_AT_ONCE = 4;
/** Lines kept per pod; older ones are dropped (the CLI has the whole log). */
export const LINES_PER_POD = 2000;

export interface LogPod {
  pod: string;
  container: string;
  /** The node's display name, which prefixes each of its lines. */
  node: string;
  /** Still running: its log is followed until it ends. */
  running: boolean;
}

const FINAL = new Set(['Succeeded', 'Failed', 'Error', 'Skipped', 'Omitted']);

/** The pods whose logs the view reads, in the order their nodes started, and how many pods the workflow has. */
export function logPods(wf: Workflow, max = MAX_PODS): { pods: LogPod[]; total: number } {
  const nodes = Object.values(wf.status?.nodes ?? {}).filter((n): n is NodeStatus & { podName: string } => !!n.podName);
  nodes.sort((a, b) => (a.startedAt ?? '~').localeCompare(b.startedAt ?? '~') || a.name.localeCompare(b.name));
  const pods: LogPod[] = [];
  const seen = new Set<string>();
  for (const n of nodes) {
    if (seen.has(n.podName)) continue;
    seen.add(n.podName);
    if (pods.length >= max) continue;
    const source = logSource(wf, n);
    pods.push({ pod: n.podName, container: source?.containers[0] ?? 'main', node: n.displayName, running: !FINAL.has(n.phase) });
  }
  return { pods, total: seen.size };
}

export interface LogLine {
  node: string;
  text: string;
}

export interface ShownLine extends LogLine {
  /** The text cut at the matches: odd pieces are matches. */
  pieces: string[];
}

/** `text` cut at each case-insensitive occurrence of `query`: [before, match, between, match, …, after]. */
export function cut(text: string, query: string): string[] {
  if (!query) return [text];
  const lower = text.toLowerCase();
  const q = query.toLowerCase();
  const pieces: string[] = [];
  let at = 0;
  for (let i = lower.indexOf(q); i >= 0; i = lower.indexOf(q, i + q.length)) {
    pieces.push(text.slice(at, i), text.slice(i, i + q.length));
    at = i + q.length;
  }
  pieces.push(text.slice(at));
  return pieces;
}

/**
 * The lines to show for `query` (matched in the node's name or the text, any case): all of them
 * with the matches marked, or with `onlyMatching` just the matching ones; and how many match.
 */
export function filterLines(lines: LogLine[], query: string, onlyMatching: boolean): { shown: ShownLine[]; matches: number } {
  const q = query.trim();
  let matches = 0;
  const shown: ShownLine[] = [];
  for (const l of lines) {
    const pieces = cut(l.text, q);
    const hit = q !== '' && (pieces.length > 1 || l.node.toLowerCase().includes(q.toLowerCase()));
    if (hit) matches++;
    if (onlyMatching && q && !hit) continue;
    shown.push({ ...l, pieces });
  }
  return { shown, matches };
}
