/**
 * Running one template invocation: find the template, bind its inputs (once, when the node is
 * created), and hand over to the executor of its kind — through the retry wrapper when the
 * template has a `retryStrategy`.
 *
 * Returns the node, or undefined when the node could not start yet (workflow parallelism
 * reached, workflow suspended or shutting down). A finished node is returned as it is: the
 * engine never re-decides finished work.
 *
 * Recursion is bounded: a template that calls itself (directly, or through others) nests one
 * invocation deeper each time. Once an invocation would be nested deeper than
 * MAX_TEMPLATE_DEPTH, the walk stops with a RecursionLimitError and reconcile.ts fails the whole
 * workflow with its message (as the peer does), instead of growing the tree until the stack or
 * the status object bursts.
 */
import { stopDaemons } from './daemons.js';
import { TEMPLATE_KINDS, type Arguments, type Inputs, type NodeStatus, type NodeType, type Template } from '../api/index.js';
import type { EngineRun } from './engine-run.js';
import { isFinal } from './node-phase.js';
import { executeDag } from './execute-dag.js';
import { executePod } from './execute-pod.js';
import { executeRetry } from './execute-retry.js';
import { executeSteps } from './execute-steps.js';
import { executeSuspend } from './execute-suspend.js';
import { executeResource } from './execute-resource.js';
import { executeTask } from './execute-task.js';
import { bindInputs, inputVariables } from './inputs.js';
import { templateDisplayName } from './display-name.js';
import { memoDecision, memoSucceeded } from './memoize.js';
import { outputPathVariables, templateVariables, templateWhere, type Execution, type NodeSeed } from './invocation.js';
import { isWaitingForLock, lockSpecsOf, nodeHolder } from './synchronization.js';
import { podNameFor } from './node-naming.js';
import { globalArtifacts, globalOutputs } from './outputs.js';
import type { TemplateReference } from './template-resolver.js';
import type { Vars } from './variables.js';

export interface Invocation {
  /** Node name (see node-naming.ts). */
  name: string;
  displayName?: string;
  boundaryID?: string;
  ref: TemplateReference;
  /** Scope of the caller: where a plain template name is looked up. */
  scope: string | undefined;
  /** Arguments, already substituted. */
  args: Arguments | undefined;
  /** Variables the call site defines for the template (`steps.name` / `tasks.name`). */
  local?: Vars;
  /** Arguments left out because they only referenced an absent output (skipped-outputs.ts). */
  absent?: readonly string[];
}

/** Deepest nesting of template invocations (the entrypoint is 1), as the peer's default. */
export const MAX_TEMPLATE_DEPTH = 100;

/** Thrown when an invocation would nest deeper than MAX_TEMPLATE_DEPTH; ends the workflow. */
export class RecursionLimitError extends Error {
  constructor(
    /** How the template is named in the message: `template "loop"`. */
    readonly template: string,
    readonly depth: number,
  ) {
    super(`maximum recursion depth exceeded: ${template} nested ${depth} deep (templates may nest at most ${MAX_TEMPLATE_DEPTH} deep)`);
    this.name = 'RecursionLimitError';
  }
}

export function executeTemplate(run: EngineRun, inv: Invocation): NodeStatus | undefined {
  const existing = run.nodeByName(inv.name);
  if (existing && isFinal(existing.phase)) return existing;
  if (run.depth >= MAX_TEMPLATE_DEPTH) throw new RecursionLimitError(describeRef(inv), run.depth + 1);
  run.depth++;
  try {
    const node = executeInvocation(run, inv, existing);
    // Daemons live as long as the Steps or DAG template that started them (daemons.ts).
    if (node && (node.type === 'Steps' || node.type === 'DAG') && isFinal(node.phase)) stopDaemons(run, node, `${node.displayName} ended`);
    return node;
  } finally {
    run.depth--;
  }
}

function executeInvocation(run: EngineRun, inv: Invocation, existing: NodeStatus | undefined): NodeStatus | undefined {
  const base = {
    name: inv.name,
    ...(inv.displayName !== undefined ? { displayName: inv.displayName } : {}),
    ...(inv.boundaryID !== undefined ? { boundaryID: inv.boundaryID } : {}),
  };
  const res = run.templates.resolve(inv.ref, inv.scope);
  if (!res.ok) {
    if (existing) return run.setPhase(existing, 'Error', res.error);
    if (!run.canStart()) return undefined;
    return run.createNode({ ...base, type: 'Pod', phase: 'Error', message: `${inv.name}: ${res.error}`, ...templateOf(inv.ref) });
  }
  const resolved = res.value;
  const where = templateWhere(resolved, inv.name);
  const template = resolved.template;
  const kind = kindOf(template);
  let inputs: Inputs;
  let shown: string | undefined;
  if (existing) {
    inputs = { ...(existing.inputs ?? {}) };
  } else {
    if (!run.canStart()) return undefined;
    const scope: Vars = { ...run.globals, ...inv.local, 'node.name': inv.name };
    // A pod template without retries knows its pod name already (execute-pod.ts names it so); a
    // resource template's is the name its pod would have (execute-resource.ts).
    if (
      (kind === 'container' || kind === 'script' || kind === 'containerSet' || kind === 'data' || kind === 'resource') &&
      !template.retryStrategy
    )
      scope['pod.name'] = podNameFor(run.workflowName, run.hashKeyOf(inv.name), resolved.templateName);
    const bound = bindInputs(template.inputs, inv.args, where, scope, inv.absent, run.parameterConfigMaps);
    if (!bound.ok)
      return run.createNode({ ...base, ...seedTemplate(resolved), type: nodeTypeOf(kind, template), phase: 'Error', message: bound.error });
    inputs = bound.inputs;
    // The template's display-name annotation, rendered now, names the node (display-name.ts).
    // Its variables are built only for a template that has a display name to render.
    const named = templateDisplayName(template, () => ({ ...scope, ...inputVariables(inputs), ...outputPathVariables(template) }), where);
    if (!named.ok)
      return run.createNode({
        ...base,
        ...seedTemplate(resolved),
        inputs,
        type: nodeTypeOf(kind, template),
        phase: 'Error',
        message: named.error,
      });
    shown = named.displayName;
  }
  const seed: NodeSeed = { ...base, ...(shown !== undefined ? { displayName: shown } : {}), ...seedTemplate(resolved), inputs };
  const ex: Execution = { seed, resolved, where, existing, timing: {}, ...(inv.local ? { local: inv.local } : {}) };
  if (kind === undefined || !SUPPORTED.has(kind)) {
    const message =
      kind === undefined
        ? `${where}: the template has no kind (one of container, script, containerSet, data, steps, dag, suspend, plugin, http, resource)`
        : `${where}: templates of kind "${kind}" are not supported by plugflow`;
    return existing ? run.setPhase(existing, 'Error', message) : run.createNode({ ...seed, type: 'Pod', phase: 'Error', message });
  }
  const before = existing?.phase;
  // A node that only waited for its template's lock has not started: it starts as a new one would.
  const fresh = !existing || isWaitingForLock(existing);
  const memo = fresh ? memoDecision(run, ex, template, nodeTypeOf(kind, template)) : { kind: 'none' as const };
  if (memo.kind === 'error') return run.createNode({ ...seed, type: nodeTypeOf(kind, template), phase: 'Error', message: memo.message });
  const holder = template.synchronization ? nodeHolder(run.namespace, run.workflowName, run.idOf(inv.name)) : undefined;
  if (holder !== undefined && fresh && memo.kind !== 'hit') {
    const gate = lockGate(run, ex, holder, nodeTypeOf(kind, template));
    if (gate !== 'held') return gate;
    ex.existing = undefined;
  }
  const node =
    memo.kind === 'hit'
      ? memo.node
      : template.retryStrategy
        ? executeRetry(run, ex, (attempt) => executeKind(run, attempt, kind))
        : executeKind(run, ex, kind);
  if (holder !== undefined && node && isFinal(node.phase)) run.locks.release(holder);
  if (node && memo.kind === 'miss') node.memoizationStatus = memo.status;
  if (node?.memoizationStatus && node.phase === 'Succeeded' && before !== 'Succeeded') memoSucceeded(run, node);
  if (node && node.phase === 'Succeeded' && before !== 'Succeeded') {
    for (const [name, value] of globalOutputs(node.outputs)) run.exportGlobal(name, value);
    for (const [name, artifact] of globalArtifacts(node.outputs)) run.exportGlobalArtifact(name, artifact);
  }
  return node;
}

/**
 * Takes the template's locks for the node about to start: 'held' lets it start; otherwise the
 * node (created, or kept) waits Pending with a message naming the lock, or ends in Error when a
 * lock cannot be named or taken at all. A stopped workflow's waiting node fails without the lock.
 */
function lockGate(run: EngineRun, ex: Execution, holder: string, type: NodeType): 'held' | NodeStatus | undefined {
  const existing = ex.existing;
  const end = (phase: 'Error' | 'Failed', message: string) =>
    existing ? run.setPhase(existing, phase, message) : run.createNode({ ...ex.seed, type, phase, message });
  if (existing && run.shutdown) return end('Failed', run.shutdown.message);
  const specs = lockSpecsOf(
    ex.resolved.template.synchronization,
    run.namespace,
    `${ex.where}.synchronization`,
    templateVariables(run.globals, ex),
  );
  if (!specs.ok) return end('Error', specs.error);
  const got = run.locks.acquire(specs.locks, holder);
  if (got.kind === 'error') return end('Error', got.message);
  if (got.kind === 'held') return 'held';
  if (existing) return run.setPhase(existing, 'Pending', got.message);
  return run.createNode({ ...ex.seed, type, phase: 'Pending', message: got.message });
}

const SUPPORTED = new Set<string>(['container', 'script', 'containerSet', 'data', 'steps', 'dag', 'suspend', 'plugin', 'http', 'resource']);

function executeKind(run: EngineRun, ex: Execution, kind: string): NodeStatus | undefined {
  switch (kind) {
    case 'container':
    case 'script':
    case 'containerSet':
    case 'data':
      return executePod(run, ex);
    case 'suspend':
      return executeSuspend(run, ex);
    case 'plugin':
    case 'http':
      return executeTask(run, ex);
    case 'resource':
      return executeResource(run, ex);
    case 'steps':
      return executeSteps(run, ex);
    case 'dag':
      return executeDag(run, ex);
    default:
      throw new Error(`unreachable: kind ${kind}`);
  }
}

/** The kind section a template has (the first one, in the spec's order). */
export function kindOf(template: Template): string | undefined {
  return TEMPLATE_KINDS.find((k) => template[k] !== undefined && template[k] !== null);
}

function nodeTypeOf(kind: string | undefined, template: Template): NodeType {
  switch (kind) {
    case 'steps':
      return 'Steps';
    case 'dag':
      return 'DAG';
    case 'suspend':
      return 'Suspend';
    case 'plugin':
      return 'Plugin';
    case 'http':
      return 'HTTP';
    case 'resource':
      return template.retryStrategy ? 'Retry' : 'Resource';
    default:
      return template.retryStrategy ? 'Retry' : 'Pod';
  }
}

function seedTemplate(resolved: { templateName: string | undefined; templateRef?: NodeSeed['templateRef']; scope: string | undefined }) {
  return {
    ...(resolved.templateName !== undefined ? { templateName: resolved.templateName } : {}),
    ...(resolved.templateRef !== undefined ? { templateRef: resolved.templateRef } : {}),
    ...(resolved.scope !== undefined && resolved.templateRef === undefined ? { templateScope: resolved.scope } : {}),
  };
}

/** `template "loop"`, `template "x" of WorkflowTemplate "lib"`, or `the inline template of <node>`, for messages. */
function describeRef(inv: Invocation): string {
  const ref = inv.ref;
  if (ref.template !== undefined) return `template ${JSON.stringify(ref.template)}`;
  if (ref.templateRef) {
    const kind = ref.templateRef.clusterScope ? 'ClusterWorkflowTemplate' : 'WorkflowTemplate';
    return `template ${JSON.stringify(ref.templateRef.template)} of ${kind} ${JSON.stringify(ref.templateRef.name)}`;
  }
  if (ref.inline?.name) return `template ${JSON.stringify(ref.inline.name)}`;
  return `the inline template of ${inv.name}`;
}

function templateOf(ref: TemplateReference) {
  return {
    ...(ref.template !== undefined ? { templateName: ref.template } : {}),
    ...(ref.templateRef !== undefined ? { templateRef: ref.templateRef } : {}),
  };
}
