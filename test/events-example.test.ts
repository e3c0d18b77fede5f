/**
 * examples/events/ works as its README says: apply the three files, start a server, run
 * fire.sh (the curl command) with the event-sender account's token, get one workflow.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LABEL_WORKFLOW_EVENT_BINDING } from '../src/api/index.js';
import { applyObjects, readManifests } from '../src/kube/apply.js';
import { REPO_ROOT } from './support/apply.js';
import { adminKubeConfig, createTestNamespace, deleteTestNamespace, serviceAccountToken } from './support/cluster.js';
import { eventually, listWorkflows, startTestServer, type TestServer } from './support/server.js';

const dir = join(REPO_ROOT, 'examples', 'events');

describe('examples/events', () => {
  let ns: string;
  let srv: TestServer;

  beforeAll(async () => {
    ns = await createTestNamespace('example');
    const objects = ['workflow-template.yaml', 'binding.yaml', 'rbac.yaml'].flatMap((f) => readManifests(join(dir, f)));
    await applyObjects(
      adminKubeConfig(),
      objects.map((o) => ({ ...o, metadata: { ...o.metadata, namespace: ns } })),
    );
    srv = await startTestServer({ namespace: ns });
    await eventually(async () => srv.bindings(ns).some((b) => b.name === 'greet-on-push'), 'the example binding in the cache');
  });

  afterAll(async () => {
    await srv?.close();
    await deleteTestNamespace(ns);
  });

  it('fire.sh submits greet-on-push with the parameters from the event', async () => {
    // A service account created a moment ago can answer 429 to a token request until the API server's cache has it.
    const token = await eventually(() => serviceAccountToken(ns, 'event-sender').catch(() => undefined), 'a token of event-sender');
    const { stdout } = await promisify(execFile)('bash', [join(dir, 'fire.sh')], {
      env: { ...process.env, SERVER: srv.url, NAMESPACE: ns, TOKEN: token },
    });
    // The default reply comes once the workflow exists, and names it.
    const wfs = await listWorkflows(ns, `${LABEL_WORKFLOW_EVENT_BINDING}=greet-on-push`);
    expect(wfs).toHaveLength(1);
    expect(JSON.parse(stdout)).toEqual({ workflows: [{ binding: 'greet-on-push', name: wfs[0].metadata.name }], errors: [] });
    expect(wfs[0].metadata.name).toMatch(/^greet-on-push-\d{14}-[a-z0-9]{6}$/);
    expect(wfs[0].metadata.labels).toMatchObject({ 'example.plugflow.io/repository': 'plugflow', 'example.plugflow.io/source': 'webhook' });
    expect(wfs[0].spec.arguments.parameters).toEqual([
      { name: 'repository', value: 'plugflow' },
      { name: 'message', value: 'hello from a webhook' },
      { name: 'commits', value: '[{"author":"ann","id":"a1b2c3"}]' },
    ]);
    expect(srv.bindings(ns)[0].problems).toEqual([]);
  });
});
