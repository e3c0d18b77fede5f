/**
 * A WorkflowEventBinding turned into compiled expressions, once, when the binding enters the
 * cache (pure). Every problem names the field: a binding whose expressions do not compile is
 * reported when it is created or changed, not when an event arrives, and is then skipped.
 *
 * Per event: `matches` runs the selector (it must yield a boolean) and `evaluateSubmission`
 * runs the parameter and metadata expressions (metadata must yield strings). Their failures
 * are BindingFailures carrying the metrics outcome.
 */
import type { EventRecorder } from '../kube/event-recorder.js';
import { WORKFLOW_EVENT_BINDINGS } from '../kube/resource.js';
import { isJsonObject as isObject, PROTO_KEY_DETAIL, protoKeyPath, type WorkflowEventBinding } from '../api/index.js';
import {
  compileBoolean,
  compileString,
  compileValue,
  eventValueText,
  valueToText,
  type ExprEnv,
  type TypedExpression,
} from '../expr/index.js';
import { describeValue } from '../expr/index.js';
import type { BindingOutcome } from './metrics.js';
import { checkEventId } from './event-id.js';
import type { Submission } from './workflow-from-event.js';
import { errorMessage } from '../log/error-message.js';

/** The expression environment of an event (src/expr `eventEnvironment`). */
export type EventEnv = ExprEnv;

export interface CompiledParameter {
  name: string;
  /** A literal `value`, used as given. */
  value?: string;
  /** `valueFrom.event`, evaluated per event. */
  event?: TypedExpression<unknown>;
}

export interface CompiledBinding {
  namespace: string;
  name: string;
  uid?: string;
  /** `metadata.generation` (or resourceVersion) the compilation is of. */
  version: string;
  template?: { name: string; clusterScope: boolean };
  selector?: TypedExpression<boolean>;
  parameters: CompiledParameter[];
  workflowName?: TypedExpression<string>;
  /** `spec.event.id`: the event's id, over the headers' (event-id.ts). */
  eventId?: TypedExpression<string>;
  labels: [string, TypedExpression<string>][];
  annotations: [string, TypedExpression<string>][];
  /** What is wrong with the binding, each naming its field; a binding with problems is skipped. */
  problems: string[];
}

/** A binding's failure for one event, with the outcome counted in /metrics. */
export class BindingFailure extends Error {
  constructor(
    readonly outcome: BindingOutcome,
    message: string,
    /** The API server was unreachable or overloaded to the end: a later delivery may succeed. */
    readonly retryable = false,
  ) {
    super(message);
    this.name = 'BindingFailure';
  }
}

export function compileBinding(b: WorkflowEventBinding): CompiledBinding {
  const md = b.metadata ?? {};
  const out: CompiledBinding = {
    namespace: md.namespace ?? '',
    name: md.name ?? '',
    uid: md.uid,
    version: String(md.generation ?? md.resourceVersion ?? ''),
    parameters: [],
    labels: [],
    annotations: [],
    problems: [],
  };
  const problem = (text: string) => out.problems.push(text);
  const attempt = <T>(fn: () => T): T | undefined => {
    try {
      return fn();
    } catch (err) {
      problem(errorMessage(err));
      return undefined;
    }
  };

  if (out.name.length > 63) problem(`metadata.name is longer than 63 characters: the workflows it submits carry it as a label value`);
  const spec = isObject(b.spec) ? b.spec : undefined;
  if (!spec) {
    problem('spec is required');
    return out;
  }
  // User JSON (src/api/user-json.ts): nothing of a binding with a `__proto__` key is used.
  const proto = protoKeyPath(spec, 'spec');
  if (proto !== undefined) {
    problem(`${proto} ${PROTO_KEY_DETAIL}`);
    return out;
  }
  const selector = isObject(spec.event) ? spec.event.selector : undefined;
  if (typeof selector !== 'string' || selector.trim() === '')
    problem('spec.event.selector is required: an expression over payload, metadata and discriminator that yields true to match');
  else out.selector = attempt(() => compileBoolean(selector, 'spec.event.selector'));
  const id = isObject(spec.event) ? spec.event.id : undefined;
  if (id !== undefined) {
    if (typeof id !== 'string' || id.trim() === '')
      problem('spec.event.id must be a string expression over the event that yields its id, e.g. payload.delivery');
    else out.eventId = attempt(() => compileString(id, 'spec.event.id'));
  }

  const submit = isObject(spec.submit) ? spec.submit : undefined;
  if (!submit) {
    problem('spec.submit is required: without it the binding can never submit a workflow');
    return out;
  }
  const ref = isObject(submit.workflowTemplateRef) ? submit.workflowTemplateRef : undefined;
  if (!ref || typeof ref.name !== 'string' || ref.name === '')
    problem(
      'spec.submit.workflowTemplateRef.name is required: the WorkflowTemplate (or, with clusterScope: true, ClusterWorkflowTemplate) to submit',
    );
  else out.template = { name: ref.name, clusterScope: ref.clusterScope === true };

  const params = submit.arguments?.parameters;
  if (params !== undefined && !Array.isArray(params)) problem('spec.submit.arguments.parameters must be a list');
  (Array.isArray(params) ? params : []).forEach((p, i) => {
    const field = `spec.submit.arguments.parameters[${i}]`;
    if (!isObject(p) || typeof p.name !== 'string' || p.name === '') return problem(`${field}.name is required`);
    const event = isObject(p.valueFrom) ? p.valueFrom.event : undefined;
    if (typeof event === 'string' && event.trim() !== '') {
      const compiled = attempt(() => compileValue(event, `${field}.valueFrom.event (parameter "${p.name}")`));
      if (compiled) out.parameters.push({ name: p.name, event: compiled });
    } else if (p.value !== undefined && p.value !== null) {
      // A literal too deep or too large to write as text is a problem of this binding, not a crash of the cache.
      let value: string | undefined;
      try {
        value = valueToText(p.value);
      } catch (err) {
        problem(`${field}.value (parameter "${p.name}") cannot be used: ${errorMessage(err)}`);
      }
      if (value !== undefined) out.parameters.push({ name: p.name, value });
    } else {
      problem(`${field} (parameter "${p.name}") needs valueFrom.event, an expression over the event, or a literal value`);
    }
  });

  const meta = submit.metadata;
  if (meta !== undefined && !isObject(meta)) problem('spec.submit.metadata must be an object with name, labels and annotations');
  else if (meta) {
    if (meta.name !== undefined) {
      if (typeof meta.name !== 'string') problem('spec.submit.metadata.name must be a string expression, e.g. \'"my-name"\'');
      else out.workflowName = attempt(() => compileString(meta.name as string, 'spec.submit.metadata.name'));
    }
    for (const kind of ['labels', 'annotations'] as const) {
      const map = meta[kind];
      if (map === undefined) continue;
      if (!isObject(map)) {
        problem(`spec.submit.metadata.${kind} must be a map of keys to string expressions`);
        continue;
      }
      for (const [key, source] of Object.entries(map)) {
        const field = `spec.submit.metadata.${kind}[${JSON.stringify(key)}]`;
        if (typeof source !== 'string')
          problem(`${field} must be a string expression (a literal is written with inner double quotes: '"value"')`);
        else {
          const compiled = attempt(() => compileString(source, field));
          if (compiled) out[kind].push([key, compiled]);
        }
      }
    }
  }
  return out;
}

/** Runs the selector; throws BindingFailure(selector_error) when it fails or is not boolean. */
export function matches(b: CompiledBinding, env: EventEnv): boolean {
  try {
    return b.selector!.evaluate(env);
  } catch (err) {
    throw new BindingFailure('selector_error', errorMessage(err));
  }
}

/** DNS-1123 subdomain: what Kubernetes accepts as an object name. */
const OBJECT_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Evaluates parameters, metadata and the event's id (`headerId`: from its request headers) for a matched event. */
export function evaluateSubmission(b: CompiledBinding, env: EventEnv, headerId?: string): Submission {
  const e = env;
  const parameters = b.parameters.map((p) => {
    if (p.value !== undefined) return { name: p.name, value: p.value };
    try {
      return { name: p.name, value: eventValueText(p.event!.evaluate(e)) };
    } catch (err) {
      throw new BindingFailure('parameter_error', errorMessage(err));
    }
  });
  const str = (x: TypedExpression<string>): string => {
    try {
      return x.evaluate(e);
    } catch (err) {
      throw new BindingFailure('metadata_error', errorMessage(err));
    }
  };
  let name: string | undefined;
  if (b.workflowName) {
    name = str(b.workflowName);
    if (name.length > 253 || !OBJECT_NAME.test(name)) {
      // Type and size only: the name is made from the event, whose values are never shown.
      throw new BindingFailure(
        'metadata_error',
        `spec.submit.metadata.name evaluated to ${describeValue(name)}, which is not a valid object name (lower-case letters, digits, '-' and '.', at most 253 characters)`,
      );
    }
  }
  const labels = Object.fromEntries(b.labels.map(([k, x]) => [k, str(x)]));
  const annotations = Object.fromEntries(b.annotations.map(([k, x]) => [k, str(x)]));
  let eventId = headerId;
  if (b.eventId) {
    try {
      eventId = checkEventId(b.eventId.evaluate(e), 'spec.event.id');
    } catch (err) {
      throw new BindingFailure('metadata_error', errorMessage(err));
    }
  }
  return {
    binding: { namespace: b.namespace, name: b.name },
    template: b.template!,
    parameters,
    name,
    ...(eventId !== undefined ? { eventId } : {}),
    labels,
    annotations,
  };
}

/** The reason of the Warning Events on a binding that is invalid or failed on an event. */
export const BINDING_ERROR_REASON = 'WorkflowEventBindingError';

/** Records a Warning Event on the binding (fire and forget). */
export function warnOnBinding(recorder: EventRecorder, binding: { namespace: string; name: string; uid?: string }, message: string): void {
  recorder.record({ metadata: binding }, 'Warning', BINDING_ERROR_REASON, message, WORKFLOW_EVENT_BINDINGS);
}
