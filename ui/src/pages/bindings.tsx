/**
 * WorkflowEventBindings of a namespace, with what each did with the events it saw (accepted,
 * dispatched, failed, deduplicated — over every server replica, GET …/{ns}/counters), and the
 * event tester: paste a payload and headers, see which bindings match, what each selector gave,
 * and the workflow each would submit — nothing is submitted (POST …/workflow-event-bindings/{ns}/test).
 */
import { eventSendCommand } from '../event-command.js';
import { useState } from 'preact/hooks';
import { call, enc, explain } from '../api.js';
import { useGet } from '../use-get.js';
import { Cli, ErrorBox } from '../components.js';
import { NeedNamespace } from '../need-namespace.js';
import type { List, Workflow } from '../types.js';

interface Binding {
  metadata: { name: string };
  spec?: { event?: { selector?: string }; submit?: { workflowTemplateRef?: { name?: string } } };
}

interface Verdict {
  binding: string;
  selector?: string;
  matched?: boolean;
  problems: string[];
  error?: { reason: string; message: string };
  workflow?: Workflow;
  rejected?: string;
}

/** What a binding did with events (src/server/binding-counters.ts). */
export interface Counters {
  accepted: number;
  dispatched: number;
  failed: number;
  deduplicated: number;
  since?: string;
}

/** `12 accepted · 10 dispatched · 1 failed · 1 deduplicated`, or that none were seen. */
export function countersText(c: Counters | undefined): string {
  if (!c || c.accepted === 0) return 'no events yet';
  return `${c.accepted} accepted · ${c.dispatched} dispatched · ${c.failed} failed · ${c.deduplicated} deduplicated`;
}

/** `Name: value` lines → {name: value}. */
export function headerLines(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const i = line.indexOf(':');
    if (i > 0) out[line.slice(0, i).trim()] = line.slice(i + 1).trim();
  }
  return out;
}

export function BindingsPage({ namespace }: { namespace: string }) {
  const got = useGet<List<Binding>>(namespace ? `/api/v1/workflow-event-bindings/${enc(namespace)}` : undefined);
  const [list, error] = [got.data?.items, got.error];
  const counted = useGet<{ bindings: Record<string, Counters> }>(
    namespace ? `/api/v1/workflow-event-bindings/${enc(namespace)}/counters` : undefined,
  );
  const counters = counted.data?.bindings;
  const [payload, setPayload] = useState('{\n  "message": "hello"\n}');
  const [headers, setHeaders] = useState('X-Github-Event: push');
  const [discriminator, setDiscriminator] = useState('');
  const [verdicts, setVerdicts] = useState<Verdict[]>();
  const [testError, setTestError] = useState<string>();
  if (!namespace) return <NeedNamespace what="Event bindings" />;
  const test = async (e: Event) => {
    e.preventDefault();
    setTestError(undefined);
    setVerdicts(undefined);
    let body: unknown;
    try {
      body = JSON.parse(payload);
    } catch (err) {
      return setTestError(`The payload is not JSON: ${explain(err)}`);
    }
    try {
      const r = await call<{ bindings: Verdict[] }>('POST', `/api/v1/workflow-event-bindings/${enc(namespace)}/test`, {
        discriminator,
        payload: body,
        headers: headerLines(headers),
      });
      setVerdicts(r.bindings);
    } catch (err) {
      setTestError(explain(err));
    }
  };
  return (
    <section>
      <h1>Event bindings in {namespace}</h1>
      <ErrorBox error={error} />
      {counted.error ? <p class="hint">Event counts unavailable: {counted.error}</p> : null}
      {list?.length === 0 ? <p class="empty">No WorkflowEventBindings in {namespace}.</p> : null}
      <table class="list">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Selector</th>
            <th scope="col">Submits</th>
            <th scope="col" title="Over every server replica, from the binding's Events (kept for the API server's event TTL)">
              Events
            </th>
          </tr>
        </thead>
        <tbody>
          {list?.map((b) => (
            <tr>
              <td>
                <details>
                  <summary>{b.metadata.name}</summary>
                  <pre class="json">{JSON.stringify(b, null, 2)}</pre>
                </details>
              </td>
              <td>
                <code>{b.spec?.event?.selector ?? ''}</code>
              </td>
              <td>{b.spec?.submit?.workflowTemplateRef?.name ?? ''}</td>
              <td
                class="counters"
                data-binding={b.metadata.name}
                title={counters?.[b.metadata.name]?.since ? `since ${counters[b.metadata.name]!.since}` : undefined}
              >
                {counted.error ? '' : countersText(counters?.[b.metadata.name])}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <form class="submit-form tester" onSubmit={(e) => void test(e)} aria-labelledby="tester-title">
        <h2 id="tester-title">Event tester</h2>
        <p class="hint">What would an event do here? Nothing is submitted.</p>
        <label class="field">
          <span>Discriminator (the path after the namespace)</span>
          <input value={discriminator} onInput={(e) => setDiscriminator((e.target as HTMLInputElement).value)} />
        </label>
        <label class="field">
          <span>Payload (JSON)</span>
          <textarea rows={8} spellcheck={false} value={payload} onInput={(e) => setPayload((e.target as HTMLTextAreaElement).value)} />
        </label>
        <label class="field">
          <span>Headers (one "Name: value" per line; only X- headers reach metadata)</span>
          <textarea rows={3} spellcheck={false} value={headers} onInput={(e) => setHeaders((e.target as HTMLTextAreaElement).value)} />
        </label>
        <ErrorBox error={testError} />
        <button type="submit">Test</button>
      </form>
      {verdicts ? (
        <ul class="verdicts" aria-label="Bindings and what this event does with them">
          {verdicts.length === 0 ? <li class="empty">No bindings in {namespace}: the event would be accepted and do nothing.</li> : null}
          {verdicts.map((v) => (
            <li class={v.matched ? 'matched' : 'unmatched'} data-binding={v.binding}>
              <strong>{v.binding}</strong>{' '}
              {v.problems.length > 0
                ? `is invalid: ${v.problems.join('; ')}`
                : v.error
                  ? `failed (${v.error.reason}): ${v.error.message}`
                  : v.matched
                    ? 'matches: its selector is true'
                    : 'does not match: its selector is false'}
              {v.selector ? (
                <div>
                  selector <code>{v.selector}</code>
                </div>
              ) : null}
              <div class="counters">So far: {countersText(counters?.[v.binding])}</div>
              {v.rejected ? <p class="error">A create would be refused: {v.rejected}</p> : null}
              {v.workflow ? (
                <details open>
                  <summary>The workflow it would submit</summary>
                  <pre class="json">{JSON.stringify(v.workflow, null, 2)}</pre>
                </details>
              ) : null}
            </li>
          ))}
        </ul>
      ) : null}
      <Cli label="Send it for real" command={eventSendCommand(namespace, discriminator, payload, headers)} />
    </section>
  );
}
