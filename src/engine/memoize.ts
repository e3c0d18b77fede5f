/**
 * Step memoization (`template.memoize`): a template whose key was stored in its cache less than
 * `maxAge` ago is not run; its node is created Succeeded with the stored outputs and
 * `memoizationStatus.hit`. A miss runs as usual; once the node succeeds, `saveMemo` is emitted
 * (from the status alone, on every reconcile, until the cache is seen holding the entry or a
 * newer one), so a controller restart between the status write and the cache write loses nothing.
 *
 * The cache is a ConfigMap in the workflow's namespace, labelled as a cache (COMPAT: the peer's
 * `configmap-type: Cache`); each data key is a memoize key, each value the JSON of a MemoEntry.
 * The controller reads the caches a workflow names into `Observations.memoCaches` and applies
 * `saveMemo` (src/controller/memo-caches.ts); the engine only decides.
 *
 * As in the peer, two workflows that miss the same key at the same time both run the step: the
 * entry is written when a step succeeds, not when it starts.
 */
import { parseGoDuration, type NodeStatus, type NodeType, type Outputs, type Template, type WorkflowStatus } from '../api/index.js';
import type { EngineAction, MemoCacheObservation, MemoEntry } from './contract.js';
import type { EngineRun } from './engine-run.js';
import { renderString } from './expressions.js';
import { templateVariables, type Execution } from './invocation.js';
import { errorMessage } from '../log/error-message.js';

/** What a ConfigMap data key may be (Kubernetes): the memoize key is used as one. */
const CONFIGMAP_KEY = /^[-._a-zA-Z0-9]+$/;
const MAX_KEY_LENGTH = 253;

export type MemoDecision =
  /** No memoize on the template. */
  | { kind: 'none' }
  /** A fresh entry: the node is done. */
  | { kind: 'hit'; node: NodeStatus }
  /** Run the template; the node records this status. */
  | { kind: 'miss'; status: NonNullable<NodeStatus['memoizationStatus']> }
  /** The key or the cache is unusable: the node ends in Error with this message. */
  | { kind: 'error'; message: string };

/**
 * Decides a memoized template's new node (called once, when the node would be created).
 * `type` is the node type the template's kind gives.
 */
export function memoDecision(run: EngineRun, ex: Execution, template: Template, type: NodeType): MemoDecision {
  const memo = template.memoize;
  if (!memo) return { kind: 'none' };
  const cacheName = memo.cache?.configMap?.name ?? '';
  let key: string;
  try {
    key = renderString(memo.key ?? '', templateVariables(run.globals, ex), `${ex.where}.memoize.key`);
  } catch (err) {
    return { kind: 'error', message: errorMessage(err) };
  }
  if (key === '' || key.length > MAX_KEY_LENGTH || !CONFIGMAP_KEY.test(key)) {
    return {
      kind: 'error',
      message: `${ex.where}.memoize.key: ${JSON.stringify(key)} cannot key the cache: a ConfigMap key is 1 to ${MAX_KEY_LENGTH} letters, digits, '-', '_' or '.'`,
    };
  }
  const cache = run.memoCaches[cacheName];
  if (!cache)
    return { kind: 'error', message: `${ex.where}.memoize.cache.configMap.name: cache ${JSON.stringify(cacheName)} was not read` };
  if ('problem' in cache) return { kind: 'error', message: `${ex.where}.memoize.cache.configMap.name: ${cache.problem}` };
  const status = { hit: false, key, cacheName };
  const entry = newer(cache.entries[key], localEntries(run).get(`${cacheName}/${key}`));
  if (!entry || !isFresh(entry, memo.maxAge, run.nowMs)) return { kind: 'miss', status };
  const node = run.createNode({ ...ex.seed, type, phase: 'Succeeded' });
  node.memoizationStatus = { ...status, hit: true };
  if (entry.outputs && Object.keys(entry.outputs).length > 0) node.outputs = structuredClone(entry.outputs);
  return { kind: 'hit', node };
}

/**
 * Called when a memoized node that ran has just succeeded: later decisions of this reconcile see
 * its entry although the cache will only hold it once `saveMemo` has been applied.
 */
export function memoSucceeded(run: EngineRun, node: NodeStatus): void {
  const entry = ownEntry(node);
  if (entry && run.memoLocal) run.memoLocal.set(`${node.memoizationStatus!.cacheName}/${node.memoizationStatus!.key}`, entry);
}

/** This workflow's succeeded memoized nodes as entries (built once per reconcile, when first needed). */
function localEntries(run: EngineRun): Map<string, MemoEntry> {
  if (!run.memoLocal) {
    run.memoLocal = new Map();
    for (const node of Object.values(run.nodes)) {
      const entry = ownEntry(node);
      if (!entry) continue;
      const at = `${node.memoizationStatus!.cacheName}/${node.memoizationStatus!.key}`;
      run.memoLocal.set(at, newer(run.memoLocal.get(at), entry)!);
    }
  }
  return run.memoLocal;
}

/** The entry a node that ran and succeeded stores. */
function ownEntry(node: NodeStatus): MemoEntry | undefined {
  const memo = node.memoizationStatus;
  if (!memo || memo.hit || node.phase !== 'Succeeded' || !node.finishedAt) return undefined;
  const outputs: Outputs = node.outputs ? structuredClone(node.outputs) : {};
  return { nodeID: node.id, outputs, creationTimestamp: node.finishedAt, lastHitTimestamp: node.finishedAt };
}

function newer(a: MemoEntry | undefined, b: MemoEntry | undefined): MemoEntry | undefined {
  if (!a || !b) return a ?? b;
  return b.creationTimestamp > a.creationTimestamp ? b : a;
}

/** An entry counts while younger than `maxAge` (validated; none or empty: it never expires). */
function isFresh(entry: MemoEntry, maxAge: string | undefined, nowMs: number): boolean {
  if (maxAge === undefined || maxAge === '') return true;
  const created = Date.parse(entry.creationTimestamp);
  if (Number.isNaN(created)) return false;
  return nowMs - created < parseGoDuration(maxAge);
}

/**
 * `saveMemo` for every memoized node that ran and succeeded and whose entry the cache does not
 * hold yet (neither this node's nor a newer one). Follows from the status and the observed caches
 * alone, so it repeats until done and stops once the write is seen.
 */
export function memoActions(status: WorkflowStatus, caches: Readonly<Record<string, MemoCacheObservation>> | undefined): EngineAction[] {
  const actions: EngineAction[] = [];
  // No cache observed: nothing could be saved (and a large workflow's nodes need no walk).
  if (caches === undefined || Object.keys(caches).length === 0) return actions;
  const nodes = status.nodes ?? {};
  for (const id in nodes) {
    const node = nodes[id]!;
    if (node.memoizationStatus === undefined) continue;
    const entry = ownEntry(node);
    if (!entry) continue;
    const { cacheName, key } = node.memoizationStatus!;
    const cache = caches?.[cacheName];
    if (!cache || 'problem' in cache) continue;
    const held = cache.entries[key];
    if (held && (held.nodeID === node.id || held.creationTimestamp >= entry.creationTimestamp)) continue;
    actions.push({ kind: 'saveMemo', cacheName, key, entry });
  }
  return actions;
}

/**
 * The cache ConfigMap names a set of templates memoize into, inline templates of their steps and
 * tasks included: the caches the controller must read for a workflow.
 */
export function memoCacheNames(templates: Iterable<Template>): string[] {
  const names = new Set<string>();
  const visit = (t: Template | undefined, depth: number): void => {
    if (!t || depth > 50) return;
    const name = t.memoize?.cache?.configMap?.name;
    if (typeof name === 'string' && name !== '') names.add(name);
    for (const group of t.steps ?? []) for (const step of Array.isArray(group) ? group : []) visit(step.inline, depth + 1);
    for (const task of t.dag?.tasks ?? []) visit(task.inline, depth + 1);
  };
  for (const t of templates) visit(t, 0);
  return [...names].sort();
}
