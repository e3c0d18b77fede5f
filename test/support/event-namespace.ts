/**
 * A namespace ready for events: alice may send events there and her events may submit; one
 * WorkflowTemplate `<kind>` taking a parameter `n`, and one binding `on-<kind>` that submits it
 * for every event whose `payload.kind` is `<kind>`, with `n` from `payload.n`. Workflows it
 * creates carry the binding's label and, for events with an id, the event-id annotation.
 */
import { cluster, createTestNamespace } from './cluster.js';
import { createObject, grantRole, rule } from './server.js';

export async function eventNamespace(prefix: string, kind: string): Promise<{ ns: string; alice: string; binding: string }> {
  const ns = await createTestNamespace(prefix);
  const { alice } = cluster().userTokens;
  await grantRole(ns, 'alice', 'event-sender', [
    rule('workfloweventbindings', 'list'),
    rule('workflowtemplates', 'get'),
    rule('workflows', 'create', 'get'),
  ]);
  await createObject(ns, 'workflowtemplates', {
    kind: 'WorkflowTemplate',
    metadata: { name: kind },
    spec: {
      entrypoint: 'main',
      arguments: { parameters: [{ name: 'n' }] },
      templates: [{ name: 'main', container: { image: 'busybox' } }],
    },
  });
  const binding = `on-${kind}`;
  await createObject(ns, 'workfloweventbindings', {
    kind: 'WorkflowEventBinding',
    metadata: { name: binding },
    spec: {
      event: { selector: `payload.kind == "${kind}"` },
      submit: { workflowTemplateRef: { name: kind }, arguments: { parameters: [{ name: 'n', valueFrom: { event: 'payload.n' } }] } },
    },
  });
  return { ns, alice, binding };
}
