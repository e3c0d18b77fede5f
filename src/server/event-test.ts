/**
 * The event tester: what the event endpoint would do with one event, without doing it. For each
 * binding of the namespace, in the order the endpoint evaluates them: its problems, whether its
 * selector is true, and the workflow it would submit (parameters and metadata evaluated, name
 * generated as the endpoint would). Pure; the route (routes/event-bindings.ts) reads the bindings
 * and checks each workflow with the caller's rights.
 *
 * Unlike the endpoint's logs and Events, the tester shows evaluated values: the caller sent the
 * payload, so nothing it shows is anyone else's.
 */
import { isJsonObject, type Workflow, type WorkflowEventBinding } from '../api/index.js';
import { eventEnvironment, type RawHeaders } from '../expr/index.js';
import { errorMessage } from '../log/error-message.js';
import { BindingFailure, compileBinding, evaluateSubmission, matches } from './binding-compile.js';
import { defaultWorkflowName, workflowFromSubmission } from './workflow-from-event.js';

export interface TestedEvent {
  namespace: string;
  discriminator: string;
  payload: unknown;
  /** Header name → value(s); only `x-` names reach `metadata`, as at the endpoint. */
  headers: RawHeaders;
}

export interface BindingVerdict {
  binding: string;
  /** The selector as written. */
  selector?: string;
  /** What the selector gave: true, false, or not evaluated (problems, an error). */
  matched?: boolean;
  /** The binding's own problems (it is skipped for every event). */
  problems: string[];
  /** Why evaluating it for this event failed, with the outcome the endpoint would count. */
  error?: { reason: string; message: string };
  /** The workflow a match would submit. */
  workflow?: Workflow;
}

/** Bindings in the endpoint's order: by name (binding-cache.ts keeps them so). */
export function testEvent(bindings: readonly WorkflowEventBinding[], event: TestedEvent, now = new Date()): BindingVerdict[] {
  const env = eventEnvironment({
    payload: event.payload,
    headers: event.headers,
    discriminator: event.discriminator,
    namespace: event.namespace,
  });
  const sorted = [...bindings].sort((a, b) => ((a.metadata?.name ?? '') < (b.metadata?.name ?? '') ? -1 : 1));
  return sorted.map((raw) => {
    const b = compileBinding(raw);
    const spec: unknown = raw.spec;
    const given = isJsonObject(spec) && isJsonObject(spec.event) ? spec.event.selector : undefined;
    const selector = typeof given === 'string' ? given : undefined;
    const verdict: BindingVerdict = { binding: b.name, selector, problems: [...b.problems] };
    if (b.problems.length > 0) return verdict;
    try {
      verdict.matched = matches(b, env);
      if (!verdict.matched) return verdict;
      const s = evaluateSubmission(b, env);
      verdict.workflow = workflowFromSubmission(s, s.name ?? defaultWorkflowName(s.template.name, now));
    } catch (err) {
      const reason = err instanceof BindingFailure ? err.outcome : 'submit_error';
      verdict.error = { reason, message: errorMessage(err) };
    }
    return verdict;
  });
}
