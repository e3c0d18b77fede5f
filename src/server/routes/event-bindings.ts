/**
 * WorkflowEventBindings and the event tester, with the caller's rights:
 *
 *   GET  /api/v1/workflow-event-bindings/{namespace}        the WorkflowEventBindingList (the peer's path)
 *   GET  /api/v1/workflow-event-bindings/{namespace}/counters
 *        → {bindings: {name: {accepted, dispatched, failed, deduplicated, since?}}} over every
 *        replica, from the binding's Events (binding-counters.ts; the caller needs `list` on events)
 *   POST /api/v1/workflow-event-bindings/{namespace}/test   {discriminator?, payload, headers?: {name: value}}
 *        → {bindings: [{binding, selector, matched, problems, error?, workflow?, rejected?}]}
 *
 * The tester (event-test.ts) evaluates every binding of the namespace against the event and shows
 * the workflow each match would submit, then checks that workflow as a create would — the
 * template read with the caller's token — and reports what a create would refuse (`rejected`).
 * It submits nothing. Unlike the event endpoint, it reads the bindings fresh with the caller's
 * token (no cache): it answers "what would happen now", for someone who may list them.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { isJsonObject, type WorkflowEventBinding } from '../../api/index.js';
import type { KubeClient } from '../../kube/client.js';
import { EVENTS, WORKFLOW_EVENT_BINDINGS } from '../../kube/resource.js';
import { bindingCounters, type CountedEvent } from '../binding-counters.js';
import { errorMessage } from '../../log/error-message.js';
import { badRequest } from '../errors.js';
import { testEvent, type BindingVerdict } from '../event-test.js';
import { validateForCreate } from '../workflow-validation.js';

/** What an event test says about the event; nothing else is taken (an ignored field would mislead). */
const TEST_FIELDS = ['discriminator', 'payload', 'headers'];

type Req = FastifyRequest<{ Params: { namespace: string }; Body: unknown }>;

export function eventBindingRoutes(app: FastifyInstance, kube: KubeClient): void {
  const base = '/api/v1/workflow-event-bindings/:namespace';
  app.get(base, async (req: Req) => kube.as(req.caller.identity).list(WORKFLOW_EVENT_BINDINGS, { namespace: req.params.namespace }));

  app.get(`${base}/counters`, async (req: Req) => {
    const events = await kube
      .as(req.caller.identity)
      .list<CountedEvent>(EVENTS, { namespace: req.params.namespace, fieldSelector: 'involvedObject.kind=WorkflowEventBinding' });
    return { bindings: bindingCounters(events.items) };
  });

  app.post(`${base}/test`, async (req: Req) => {
    const { namespace } = req.params;
    const body = req.body;
    if (!isJsonObject(body)) throw badRequest('the body must be a JSON object: {"discriminator": …, "payload": {…}, "headers": {…}}');
    const unknown = Object.keys(body).filter((k) => !TEST_FIELDS.includes(k));
    if (unknown.length > 0) throw badRequest(`${unknown.join(', ')}: not a field of an event test (it takes ${TEST_FIELDS.join(', ')})`);
    if (!('payload' in body)) throw badRequest('payload is required: the JSON body the event would carry');
    const discriminator = body.discriminator ?? '';
    if (typeof discriminator !== 'string') throw badRequest('discriminator must be a string');
    const headers = body.headers ?? {};
    if (!isJsonObject(headers) || !Object.values(headers).every((v) => typeof v === 'string'))
      throw badRequest('headers must be an object of header name → string value');
    const asCaller = kube.as(req.caller.identity);
    const list = await asCaller.list<WorkflowEventBinding>(WORKFLOW_EVENT_BINDINGS, { namespace });
    const verdicts: (BindingVerdict & { rejected?: string })[] = testEvent(list.items, {
      namespace,
      discriminator,
      payload: body.payload,
      headers: headers as Record<string, string>,
    });
    await Promise.all(
      verdicts.map(async (v) => {
        if (!v.workflow) return;
        try {
          await validateForCreate(asCaller, namespace, v.workflow);
        } catch (err) {
          v.rejected = errorMessage(err);
        }
      }),
    );
    return { bindings: verdicts };
  });
}
