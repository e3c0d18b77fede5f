/**
 * Requests per client, from the API server's audit log: every request is logged at Metadata level
 * once it completes, so the counts are by authenticated user and cover every resource (workflows,
 * their status, Events, leases...), whatever the client's own metrics say; and each entry's two
 * timestamps give the request's latency inside the API server.
 */
import { closeSync, openSync, readSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RequestKind } from './api-server-side.js';

const POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived", "ResponseStarted"]
rules:
- level: Metadata
`;

const WRITES = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);

/** kube-apiserver flags for the audit log in `dir`. */
export function auditArgs(dir: string): string[] {
  writeFileSync(join(dir, 'audit-policy.yaml'), POLICY);
  return [
    `--audit-policy-file=${join(dir, 'audit-policy.yaml')}`,
    `--audit-log-path=${join(dir, 'audit.log')}`,
    '--audit-log-maxsize=0',
    '--audit-log-mode=blocking',
  ];
}

export class AuditLog {
  constructor(private readonly path: string) {}

  /** The current end of the log: counts start after it. */
  mark(): number {
    try {
      return statSync(this.path).size;
    } catch {
      return 0;
    }
  }

  /**
   * Writes per user (and per user and resource) logged since `from`, and every request but
   * watches per user by kind (`verb resource[/subresource]`) with their summed latency.
   */
  writesSince(from: number): {
    byUser: Map<string, number>;
    byUserResource: Map<string, number>;
    requests: Map<string, Map<string, RequestKind>>;
  } {
    const end = this.mark();
    const byUser = new Map<string, number>();
    const byUserResource = new Map<string, number>();
    const requests = new Map<string, Map<string, RequestKind>>();
    if (end <= from) return { byUser, byUserResource, requests };
    const fd = openSync(this.path, 'r');
    const buf = Buffer.alloc(end - from);
    try {
      readSync(fd, buf, 0, buf.length, from);
    } finally {
      closeSync(fd);
    }
    for (const line of buf.toString('utf8').split('\n')) {
      if (!line) continue;
      let e: {
        stage?: string;
        verb?: string;
        user?: { username?: string };
        objectRef?: { resource?: string; subresource?: string };
        requestReceivedTimestamp?: string;
        stageTimestamp?: string;
      };
      try {
        e = JSON.parse(line);
      } catch {
        continue; // a line still being written: the bench reads only after the API server went quiet
      }
      if (e.stage !== 'ResponseComplete') continue;
      // Access and token reviews are POSTs that store nothing: not writes.
      if (e.objectRef?.resource?.endsWith('reviews')) continue;
      const user = e.user?.username ?? '?';
      const res = `${e.objectRef?.resource ?? '?'}${e.objectRef?.subresource ? '/' + e.objectRef.subresource : ''}`;
      const verb = e.verb ?? '?';
      if (verb !== 'watch') {
        let mine = requests.get(user);
        if (!mine) requests.set(user, (mine = new Map()));
        const kind = mine.get(`${verb} ${res}`) ?? { count: 0, latencyMs: 0 };
        kind.count++;
        kind.latencyMs += Math.max(0, micros(e.stageTimestamp) - micros(e.requestReceivedTimestamp)) / 1000;
        mine.set(`${verb} ${res}`, kind);
      }
      if (!WRITES.has(verb)) continue;
      byUser.set(user, (byUser.get(user) ?? 0) + 1);
      byUserResource.set(`${user} ${res}`, (byUserResource.get(`${user} ${res}`) ?? 0) + 1);
    }
    return { byUser, byUserResource, requests };
  }
}

/** An audit timestamp (RFC 3339 with microseconds) in microseconds since the epoch. */
function micros(ts: string | undefined): number {
  if (!ts) return 0;
  const m = /^(.*T\d\d:\d\d:\d\d)(?:\.(\d+))?Z$/.exec(ts);
  if (!m) return Date.parse(ts) * 1000;
  return Date.parse(`${m[1]}Z`) * 1000 + Number((m[2] ?? '').padEnd(6, '0').slice(0, 6));
}
