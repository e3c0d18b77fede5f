import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSubmit } from './rest.js';

/** A real server standing in for plugflow's REST API; it only counts the requests it gets. */
let requests = 0;
const server = createServer((req, res) => {
  requests++;
  res.writeHead(500).end();
});
let url = '';
beforeAll(async () => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const quiet = { out: () => {}, err: () => {} };

describe('plugflow submit refuses fields plugflow does not implement', () => {
  it('names each field and sends nothing', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'pf-submit-')), 'wf.yaml');
    writeFileSync(
      file,
      [
        'apiVersion: plugflow.io/v1alpha1',
        'kind: Workflow',
        'metadata: {name: locked}',
        'spec:',
        '  entrypoint: main',
        '  podPriority: 1',
        '  templates:',
        '  - name: main',
        '    priority: 5',
        '    container: {image: alpine, command: [sleep, "1"]}',
      ].join('\n'),
    );
    await expect(runSubmit(file, { server: url, token: 't', parameter: [] }, quiet)).rejects.toThrow(
      'Workflow default/locked is invalid: spec.podPriority is not supported yet: deprecated by the peer; use podPriorityClassName; ' +
        "spec.templates[main].priority is not supported yet: the peer sets it as the step pod's spec.priority, which Kubernetes' Priority admission refuses unless it equals the priorityClassName's value; use priorityClassName",
    );
    expect(requests).toBe(0);
  });
});
