/**
 * Helpers for the server suites: the server's own identity (the plugflow-server service account
 * with exactly the rights of manifests/base/rbac-server.yaml), an in-process server with a
 * captured log, an HTTP client that accepts the generated certificate, and RBAC one-liners.
 */
import { CoreV1Api, CustomObjectsApi, RbacAuthorizationV1Api, type KubeConfig, type V1PolicyRule } from '@kubernetes/client-node';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { Agent, request } from 'undici';
import winston from 'winston';
import { GROUP, PLURAL, VERSION } from '../../src/api/index.js';
import { applyObjects, readManifests } from '../../src/kube/apply.js';
import { startServer, type RunningServer, type ServerOptions } from '../../src/server/server.js';
import { REPO_ROOT } from './apply.js';
import { adminKubeConfig, kubeConfigForToken, serviceAccountToken } from './cluster.js';

let serverKc: Promise<KubeConfig> | undefined;

/** A kubeconfig of the plugflow-server service account, with the rights the manifests give it. */
export function serverKubeConfig(): Promise<KubeConfig> {
  serverKc ??= (async () => {
    const dir = join(REPO_ROOT, 'manifests', 'base');
    await applyObjects(adminKubeConfig(), [
      ...readManifests(join(dir, 'namespace.yaml')),
      ...readManifests(join(dir, 'rbac-server.yaml')),
      ...readManifests(join(dir, 'rbac-server-mode.yaml')),
    ]);
    // A service account created a moment ago can answer 429 to a token request until the API server's cache has it.
    const token = await eventually(
      () => serviceAccountToken('plugflow', 'plugflow-server').catch(() => undefined),
      'a token of plugflow-server',
    );
    return kubeConfigForToken(token, 'plugflow-server');
  })();
  return serverKc;
}

export interface TestServer extends RunningServer {
  /** Every log line the server wrote, as JSON text. */
  logs: string[];
}

/**
 * Server mode's rights in one namespace, bound as manifests/server-mode/rolebinding.yaml does
 * (the install binds them nowhere); idempotent.
 */
export async function bindServerMode(namespace: string): Promise<void> {
  const doc = readManifests(join(REPO_ROOT, 'manifests', 'server-mode', 'rolebinding.yaml'))[0] as { metadata: { namespace: string } };
  doc.metadata.namespace = namespace;
  await applyObjects(adminKubeConfig(), [doc as never]);
}

/** Starts a server on a free loopback port with a captured log (server mode: bound in its namespace). */
export async function startTestServer(opts: Partial<ServerOptions> = {}): Promise<TestServer> {
  if (opts.authMode === 'server' && opts.namespace) await bindServerMode(opts.namespace);
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      logs.push(String(chunk).trim());
      cb();
    },
  });
  const logger = winston.createLogger({
    level: 'debug',
    defaultMeta: { component: 'server' },
    format: winston.format.combine(winston.format.timestamp(), winston.format.json()),
    transports: [new winston.transports.Stream({ stream: sink })],
  });
  const server = await startServer({
    kubeConfig: await serverKubeConfig(),
    port: 0,
    host: '127.0.0.1',
    processMetrics: false,
    logger,
    ...opts,
  });
  return Object.assign(server, { logs });
}

const insecure = new Agent({ connect: { rejectUnauthorized: false } });

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: any;
  text: string;
}

/** One HTTP call; `body` objects are sent as JSON, strings as they are. */
export async function call(
  method: string,
  url: string,
  opts: { token?: string; body?: unknown; headers?: Record<string, string | string[]> } = {},
): Promise<Reply> {
  const headers: Record<string, string | string[]> = { ...opts.headers };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  let body: string | undefined;
  if (opts.body !== undefined) {
    body = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
    headers['content-type'] ??= 'application/json';
  }
  const res = await request(url, { method: method as 'GET', headers, body, dispatcher: insecure });
  const text = await res.body.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = text;
  }
  return { status: res.statusCode, headers: res.headers, body: parsed, text };
}

/** Creates a Role in the namespace with the rules and binds it to the user. */
export async function grantRole(namespace: string, user: string, name: string, rules: V1PolicyRule[]): Promise<void> {
  const rbac = adminKubeConfig().makeApiClient(RbacAuthorizationV1Api);
  await rbac.createNamespacedRole({ namespace, body: { metadata: { name }, rules } });
  await rbac.createNamespacedRoleBinding({
    namespace,
    body: {
      metadata: { name: `${name}-${user}` },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
      subjects: [{ kind: 'User', name: user, apiGroup: 'rbac.authorization.k8s.io' }],
    },
  });
}

/** A rule on plugflow resources. */
export const rule = (resource: string, ...verbs: string[]): V1PolicyRule => ({ apiGroups: [GROUP], resources: [resource], verbs });

export function customObjects(): CustomObjectsApi {
  return adminKubeConfig().makeApiClient(CustomObjectsApi);
}

/** Creates a namespaced plugflow object as admin. */
export async function createObject(namespace: string, plural: string, body: Record<string, unknown>): Promise<void> {
  await customObjects().createNamespacedCustomObject({
    group: GROUP,
    version: VERSION,
    namespace,
    plural,
    body: { apiVersion: `${GROUP}/${VERSION}`, ...body },
  });
}

/** The workflows of a namespace (as admin), optionally by label selector. */
export async function listWorkflows(namespace: string, labelSelector?: string): Promise<any[]> {
  const res = await customObjects().listNamespacedCustomObject({
    group: GROUP,
    version: VERSION,
    namespace,
    plural: PLURAL.workflow,
    labelSelector,
  });
  return (res as { items: any[] }).items;
}

/** Kubernetes Events about one object. */
export async function eventsAbout(
  namespace: string,
  name: string,
): Promise<{ type?: string; reason?: string; message?: string; count?: number }[]> {
  const res = await adminKubeConfig()
    .makeApiClient(CoreV1Api)
    .listNamespacedEvent({ namespace, fieldSelector: `involvedObject.name=${name}` });
  return res.items;
}

/** Polls `fn` until it returns a truthy value (or throws after `timeoutMs`). */
export async function eventually<T>(fn: () => Promise<T | undefined | false>, what: string, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
