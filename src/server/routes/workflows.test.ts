/**
 * POST /api/v1/workflows/{namespace} through the real server (buildApp's node:http server and
 * error handler, on a socket), with a stand-in for the Kubernetes API: malformed workflows get
 * 400 naming the field, never 500; an unexpected failure gets a generic 500 and is logged.
 */
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import winston from 'winston';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Authenticator } from '../auth.js';
import { INTERNAL_MESSAGE } from '../errors.js';
import type { KubeClient } from '../../kube/client.js';
import { startApiStandIn, statusReply, type ApiStandIn, type StandInReply, type StandInRequest } from '../../kube/testing/api-stand-in.js';
import { ServerMetrics } from '../metrics.js';
import { buildApp } from '../app.js';
import { workflowRoutes } from './workflows.js';

const logs: Record<string, unknown>[] = [];
const logger = winston.createLogger({
  level: 'info',
  format: winston.format.json(),
  transports: [
    new winston.transports.Stream({
      stream: new Writable({
        write(chunk: Buffer, _enc, done) {
          logs.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
          done();
        },
      }),
    }),
  ],
});

/** The API server: no templates; a create echoes the workflow, or fails as `fail` says. */
let fail: ((req: StandInRequest) => StandInReply) | undefined;
const created: unknown[] = [];
let api: ApiStandIn;
let kube: KubeClient;

let app: FastifyInstance;
let base: string;

beforeAll(async () => {
  api = await startApiStandIn((req) => {
    if (fail) return fail(req);
    if (req.method === 'GET') return statusReply(404, 'NotFound', 'not found');
    created.push(req.body);
    return { status: 201, body: req.body };
  });
  kube = api.client;
  app = buildApp(undefined, 1024 * 1024, logger, new ServerMetrics(false), () => false);
  await app.register(workflowRoutes, { kube, auth: new Authenticator({ mode: 'server', kube, unsafeServerModeWithoutAuth: true }) });
  await app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await app.close();
  await api.close();
});

async function post(body: unknown): Promise<{ status: number; body: { code?: number; message?: string } }> {
  const res = await fetch(`${base}/api/v1/workflows/ns`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as { code?: number; message?: string } };
}

const main = { name: 'main', container: { image: 'busybox', command: ['echo', 'hi'] } };
const valid = () => ({
  apiVersion: 'plugflow.io/v1alpha1',
  kind: 'Workflow',
  metadata: { generateName: 'hello-' },
  spec: { entrypoint: 'main', templates: [structuredClone(main)] },
});
/** The valid workflow with `edit` applied. */
function workflow(edit: (wf: any) => void): unknown {
  const wf = valid();
  edit(wf);
  return wf;
}

describe('POST /api/v1/workflows/{namespace} with a malformed workflow', () => {
  // The inputs the fuzz found answered 500, and their kin: each is 400, InvalidArgument, naming the field.
  it.each<[string, unknown, string | RegExp]>([
    ['spec.templates = -1', workflow((w) => (w.spec.templates = -1)), 'spec.templates must be array'],
    ['spec.templates = 0', workflow((w) => (w.spec.templates = 0)), 'spec.templates must be array'],
    ['spec.templates = true', workflow((w) => (w.spec.templates = true)), 'spec.templates must be array'],
    ['spec.templates = "x"', workflow((w) => (w.spec.templates = 'x')), 'spec.templates must be array'],
    ['spec.templates = "\\u0000"', workflow((w) => (w.spec.templates = '\u0000')), 'spec.templates must be array'],
    ['spec.templates = an object', workflow((w) => (w.spec.templates = { main })), 'spec.templates must be array'],
    [
      'spec.templates = [[], null]',
      workflow((w) => (w.spec.templates = [[], null])),
      'spec.templates[0] must be object; spec.templates[1] must be object',
    ],
    ['spec.templates[0] = null', workflow((w) => (w.spec.templates[0] = null)), 'spec.templates[0] must be object'],
    [
      'spec.templates[0] wrapped in a list',
      workflow((w) => (w.spec.templates[0] = [w.spec.templates[0]])),
      'spec.templates[0] must be object',
    ],
    ['metadata.name = {"toString": [...]}', workflow((w) => (w.metadata = { name: { toString: [1, 2] } })), 'metadata.name must be string'],
    [
      'metadata.generateName = {"valueOf": 1}',
      workflow((w) => (w.metadata = { generateName: { valueOf: 1 } })),
      'metadata.generateName must be string',
    ],
    ['metadata.namespace = ["ns"]', workflow((w) => (w.metadata.namespace = ['ns'])), 'metadata.namespace must be string'],
    ['metadata.labels = "x"', workflow((w) => (w.metadata.labels = 'x')), 'metadata.labels must be object'],
    ['apiVersion = a list', workflow((w) => (w.apiVersion = ['plugflow.io/v1alpha1'])), 'apiVersion must be string'],
    ['kind = {"toString": [...]}', workflow((w) => (w.kind = { toString: [] })), 'kind must be string'],
    ['spec.entrypoint = {}', workflow((w) => (w.spec.entrypoint = {})), 'spec.entrypoint must be string'],
    ['spec.arguments.parameters = -1', workflow((w) => (w.spec.arguments = { parameters: -1 })), 'spec.arguments.parameters must be array'],
    [
      'spec.templates[0].steps = 0',
      workflow((w) => (w.spec.templates[0] = { name: 'main', steps: 0 })),
      'spec.templates[0].steps must be array',
    ],
    [
      'spec.templates[0].dag = []',
      workflow((w) => (w.spec.templates[0] = { name: 'main', dag: [] })),
      'spec.templates[0].dag must be object',
    ],
    [
      'an inline template with steps = "x"',
      workflow((w) => (w.spec.templates = [{ name: 'main', steps: [[{ name: 's', inline: { steps: 'x' } }]] }])),
      'spec.templates[0].steps[0][0].inline.steps must be array',
    ],
    [
      'spec.workflowTemplateRef = "lib"',
      workflow((w) => (w.spec = { workflowTemplateRef: 'lib' })),
      'spec.workflowTemplateRef must be object',
    ],
    ['spec = null', workflow((w) => (w.spec = null)), /^workflow\.spec is required/],
    ['metadata = []', workflow((w) => (w.metadata = [])), /^workflow\.metadata must be an object/],
  ])('%s → 400 naming the field', async (_label, wf, expected) => {
    const res = await post({ namespace: 'ns', workflow: wf });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe(3);
    if (typeof expected === 'string') expect(res.body.message).toContain(expected);
    else expect(res.body.message).toMatch(expected);
  });

  it('names the body field when the namespace in it is not a string', async () => {
    const res = await post({ namespace: { toString: [] }, workflow: valid() });
    expect(res).toEqual({ status: 400, body: { code: 3, message: expect.stringMatching(/^namespace in the body must be a string/) } });
  });

  it('lists at most 20 problems of a document with thousands', async () => {
    const res = await post({ workflow: workflow((w) => (w.spec.templates = Array.from({ length: 3000 }, () => 1))) });
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/spec\.templates\[19\] must be object; and \d+ more$/);
    expect(res.body.message!.length).toBeLessThan(2000);
  });

  it('still creates a well-formed workflow', async () => {
    const res = await post({ namespace: 'ns', workflow: valid() });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ kind: 'Workflow', metadata: { generateName: 'hello-', namespace: 'ns' } });
  });
});

describe('an unexpected failure in a handler', () => {
  it('is a 500 with a generic message, and the details are logged', async () => {
    // A 2xx reply that is not JSON: not an API server refusal, so nothing the caller should see.
    fail = () => ({ status: 201, text: '{"kind": "Workflow", broken' });
    try {
      logs.length = 0;
      const res = await post({ workflow: valid() });
      expect(res).toEqual({ status: 500, body: { code: 13, message: INTERNAL_MESSAGE } });
      const line = logs.find((l) => l.message === 'request failed');
      expect(line).toMatchObject({
        level: 'error',
        method: 'POST',
        route: '/api/v1/workflows/:namespace',
        error: expect.stringMatching(/JSON/),
      });
      expect(String(line?.stack)).toContain('SyntaxError');
    } finally {
      fail = undefined;
    }
  });

  it('is a 503 naming the API server when it cannot be reached', async () => {
    // The connection cut without a reply: a transport failure (ApiError code 0).
    fail = () => 'hang-up';
    try {
      const res = await post({ workflow: valid() });
      expect(res.status).toBe(503);
      expect(res.body).toEqual({
        code: 14,
        message: expect.stringMatching(/^the Kubernetes API server could not be reached: .*other side closed/),
      });
    } finally {
      fail = undefined;
    }
  });
});
