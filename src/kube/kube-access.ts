/**
 * How the long-running processes (controller, server, agent) find their credentials without
 * loading client-node: its KubeConfig module imports every generated API class and model, about
 * 70 MiB of the controller's idle RSS (bench/RESULTS.md, section "peer"), to read a file that
 * in the common cases says "this server, this CA, this token or certificate".
 *
 * `loadKubeAccess` reads those cases itself — the in-cluster service account (the installed
 * controller's case), and a kubeconfig whose context names a cluster by server/CA/TLS fields and
 * a user by token, token file, client certificate or basic auth. Anything else (exec plugins,
 * auth providers, proxies, impersonation, several $KUBECONFIG files to merge, fields it does not
 * know) goes to client-node's loader (src/kube/kubeconfig.ts), imported only then, so the
 * semantics of the rare cases stay the library's. Both satisfy `KubeAccess`, what KubeClient uses.
 */
import { existsSync, readFileSync } from 'node:fs';
import type { RequestOptions } from 'node:https';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';
import { readYamlDocument } from '../yaml/kube-yaml.js';

/** What KubeClient needs of a kubeconfig; client-node's KubeConfig has the same two methods. */
export interface KubeAccess {
  getCurrentCluster(): { server: string } | null;
  /** Fills CA, client certificate, TLS options and the Authorization header (re-read each call). */
  applyToHTTPSOptions(opts: RequestOptions): Promise<void>;
}

export const IN_CLUSTER_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/** A kubeconfig path, or the default: $KUBECONFIG, ~/.kube/config, else the in-cluster account. */
export async function loadKubeAccess(source?: KubeAccess | string, context?: string): Promise<KubeAccess> {
  if (source !== undefined && typeof source !== 'string') return source;
  const simple = readSimpleAccess(source, context, process.env);
  if (simple) return simple;
  const { loadKubeConfig } = await import('./kubeconfig.js');
  return loadKubeConfig(source, context);
}

type Env = Record<string, string | undefined>;
type Obj = Record<string, unknown>;

const CLUSTER_FIELDS = new Set([
  'server',
  'certificate-authority',
  'certificate-authority-data',
  'insecure-skip-tls-verify',
  'tls-server-name',
  'extensions',
]);
const USER_FIELDS = new Set([
  'token',
  'tokenFile',
  'client-certificate',
  'client-certificate-data',
  'client-key',
  'client-key-data',
  'username',
  'password',
  'extensions',
]);

/**
 * The access described by the kubeconfig (or in-cluster account) when it is a simple case, else
 * undefined (the caller then uses client-node's loader). Errors of a simple file (no such
 * context, unreadable) are thrown with the file and the name.
 */
export function readSimpleAccess(
  path: string | undefined,
  context: string | undefined,
  env: Env,
  home = homedir(),
): KubeAccess | undefined {
  let file = path;
  if (!file) {
    const list = (env.KUBECONFIG ?? '').split(':').filter(Boolean);
    if (list.length > 1) return undefined; // merging several files: the library's rules
    file = list[0] ?? (existsSync(join(home, '.kube', 'config')) ? join(home, '.kube', 'config') : undefined);
  }
  if (!file) return context ? undefined : inCluster(env);
  const doc = readYamlDocument(readFileSync(file, 'utf8'), file, { what: 'kubeconfig' }) as Obj | null;
  if (!doc || typeof doc !== 'object') return undefined;
  const ctxName = context ?? (doc['current-context'] as string | undefined);
  if (!ctxName) return undefined;
  const named = (list: unknown, name: string, key: string): Obj | undefined => {
    if (!Array.isArray(list)) return undefined;
    const e = (list as Obj[]).find((x) => x && x.name === name);
    const v = e?.[key];
    return v && typeof v === 'object' ? (v as Obj) : undefined;
  };
  const ctx = named(doc.contexts, ctxName, 'context');
  if (!ctx) return undefined;
  const cluster = named(doc.clusters, String(ctx.cluster), 'cluster');
  const user = ctx.user === undefined ? {} : named(doc.users, String(ctx.user), 'user');
  if (!cluster || !user || typeof cluster.server !== 'string') return undefined;
  if (Object.keys(cluster).some((k) => !CLUSTER_FIELDS.has(k)) || Object.keys(user).some((k) => !USER_FIELDS.has(k))) return undefined;
  const base = dirname(file);
  const abs = (p: unknown) => (typeof p === 'string' && p ? (isAbsolute(p) ? p : join(base, p)) : undefined);
  const data = (d: unknown) => (typeof d === 'string' && d ? Buffer.from(d, 'base64') : undefined);
  return new SimpleAccess({
    server: cluster.server,
    ca: data(cluster['certificate-authority-data']),
    caFile: abs(cluster['certificate-authority']),
    insecure: cluster['insecure-skip-tls-verify'] === true,
    serverName: typeof cluster['tls-server-name'] === 'string' ? cluster['tls-server-name'] : undefined,
    token: typeof user.token === 'string' ? user.token : undefined,
    tokenFile: abs(user.tokenFile),
    cert: data(user['client-certificate-data']),
    certFile: abs(user['client-certificate']),
    key: data(user['client-key-data']),
    keyFile: abs(user['client-key']),
    username: typeof user.username === 'string' ? user.username : undefined,
    password: typeof user.password === 'string' ? user.password : undefined,
  });
}

/** The pod's service account, as every Kubernetes client reads it; undefined outside a pod. */
function inCluster(env: Env): KubeAccess | undefined {
  const host = env.KUBERNETES_SERVICE_HOST;
  const port = env.KUBERNETES_SERVICE_PORT;
  if (!host || !port || !existsSync(join(IN_CLUSTER_DIR, 'token'))) return undefined;
  return new SimpleAccess({
    server: `https://${host.includes(':') ? `[${host}]` : host}:${port}`,
    caFile: join(IN_CLUSTER_DIR, 'ca.crt'),
    tokenFile: join(IN_CLUSTER_DIR, 'token'),
  });
}

interface SimpleFields {
  server: string;
  ca?: Buffer;
  caFile?: string;
  insecure?: boolean;
  serverName?: string;
  token?: string;
  tokenFile?: string;
  cert?: Buffer;
  certFile?: string;
  key?: Buffer;
  keyFile?: string;
  username?: string;
  password?: string;
}

class SimpleAccess implements KubeAccess {
  constructor(private readonly f: SimpleFields) {}

  getCurrentCluster(): { server: string } {
    return { server: this.f.server };
  }

  /** Files are read on every call: rotated tokens and certificates are picked up (KubeClient calls it once a minute). */
  applyToHTTPSOptions(opts: RequestOptions): Promise<void> {
    const f = this.f;
    const ca = f.ca ?? (f.caFile ? readFileSync(f.caFile) : undefined);
    if (ca) opts.ca = ca;
    const cert = f.cert ?? (f.certFile ? readFileSync(f.certFile) : undefined);
    const key = f.key ?? (f.keyFile ? readFileSync(f.keyFile) : undefined);
    if (cert) opts.cert = cert;
    if (key) opts.key = key;
    if (f.insecure) opts.rejectUnauthorized = false;
    if (f.serverName) opts.servername = f.serverName;
    const token = f.token ?? (f.tokenFile ? readFileSync(f.tokenFile, 'utf8').trim() : undefined);
    if (token) opts.headers = { ...(opts.headers as Obj | undefined), Authorization: `Bearer ${token}` } as RequestOptions['headers'];
    else if (f.username !== undefined) opts.auth = `${f.username}:${f.password ?? ''}`;
    return Promise.resolve();
  }
}
