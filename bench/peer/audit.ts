/**
 * Writes per client, from the API server's audit log: every create/update/patch/delete is logged
 * at Metadata level once it completes, so the count is by authenticated user and covers every
 * resource (workflows, their status, Events, leases...), whatever the client's own metrics say.
 */
import { closeSync, openSync, readSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived", "ResponseStarted"]
rules:
- level: Metadata
  verbs: ["create", "update", "patch", "delete", "deletecollection"]
- level: None
`;

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

  /** Writes per user (and per user and resource) logged since `from`. */
  writesSince(from: number): { byUser: Map<string, number>; byUserResource: Map<string, number> } {
    const end = this.mark();
    const byUser = new Map<string, number>();
    const byUserResource = new Map<string, number>();
    if (end <= from) return { byUser, byUserResource };
    const fd = openSync(this.path, 'r');
    const buf = Buffer.alloc(end - from);
    try {
      readSync(fd, buf, 0, buf.length, from);
    } finally {
      closeSync(fd);
    }
    for (const line of buf.toString('utf8').split('\n')) {
      if (!line) continue;
      let e: { stage?: string; user?: { username?: string }; objectRef?: { resource?: string; subresource?: string } };
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
      byUser.set(user, (byUser.get(user) ?? 0) + 1);
      byUserResource.set(`${user} ${res}`, (byUserResource.get(`${user} ${res}`) ?? 0) + 1);
    }
    return { byUser, byUserResource };
  }
}
