/**
 * The API server's side of a controller's run: its CPU and etcd's (from /proc), the requests the
 * controller's user made by kind with their latency (from the audit log, which then records every
 * request but watches at Metadata level), and the watch events the API server sent by kind with
 * their bytes (from its /metrics: one controller runs at a time, so the difference over a run is
 * that controller's and the bench's own watch).
 */
import { execFileSync } from 'node:child_process';
import type { ControlPlane } from '../../src/devenv/control-plane.js';
import type { KubeClient } from '../../src/kube/client.js';
import { cpuSeconds } from './controller-process.js';

/** The pids of a control plane's kube-apiserver and etcd (their arguments name its directory). */
export function planePids(plane: ControlPlane): { apiserver: number; etcd: number } {
  const found: Record<string, number> = {};
  for (const line of execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' }).split('\n')) {
    if (!line.includes(plane.dir)) continue;
    const [pid, bin] = line.trim().split(/\s+/);
    for (const name of ['kube-apiserver', 'etcd']) if (bin?.endsWith(`/${name}`)) found[name] = Number(pid);
  }
  if (!found['kube-apiserver'] || !found.etcd) throw new Error(`kube-apiserver or etcd of ${plane.dir} not found in ps`);
  return { apiserver: found['kube-apiserver'], etcd: found.etcd };
}

/** Requests of one kind (`verb resource[/subresource]`): how many, and their summed latency. */
export interface RequestKind {
  count: number;
  latencyMs: number;
}

/** Watch events the API server sent of one kind: how many, and their bytes. */
export interface WatchKind {
  events: number;
  bytes: number;
}

export interface ApiServerSide {
  apiserverCpu: number;
  etcdCpu: number;
  /** The controller's requests by kind (audit log). */
  requests: Map<string, RequestKind>;
  /** Watch events sent by object kind (the API server's metrics, everyone's). */
  watch: Map<string, WatchKind>;
}

export interface Mark {
  apiserverCpu: number;
  etcdCpu: number;
  watch: Map<string, WatchKind>;
}

export class ApiServerMeter {
  constructor(
    private readonly pids: { apiserver: number; etcd: number },
    private readonly client: KubeClient,
  ) {}

  async mark(): Promise<Mark> {
    return {
      apiserverCpu: cpuSeconds(this.pids.apiserver),
      etcdCpu: cpuSeconds(this.pids.etcd),
      watch: await this.watchEvents(),
    };
  }

  /** What happened since `from`; `requests` is the controller's user's, from the audit log. */
  async since(from: Mark, requests: Map<string, RequestKind>): Promise<ApiServerSide> {
    const now = await this.mark();
    const watch = new Map<string, WatchKind>();
    for (const [kind, w] of now.watch) {
      const before = from.watch.get(kind) ?? { events: 0, bytes: 0 };
      const d = { events: w.events - before.events, bytes: w.bytes - before.bytes };
      if (d.events > 0) watch.set(kind, d);
    }
    return { apiserverCpu: now.apiserverCpu - from.apiserverCpu, etcdCpu: now.etcdCpu - from.etcdCpu, requests, watch };
  }

  private async watchEvents(): Promise<Map<string, WatchKind>> {
    const out = new Map<string, WatchKind>();
    const text = await this.client.getText('/metrics');
    for (const line of text.split('\n')) {
      const m = /^apiserver_watch_events_(total|sizes_sum)\{([^}]*)\} (\S+)$/.exec(line);
      if (!m) continue;
      // Labelled by resource in newer API servers, by kind in older ones.
      const kind = /(?:^|,)(?:resource|kind)="([^"]*)"/.exec(m[2]!)?.[1] ?? '?';
      const w = out.get(kind) ?? { events: 0, bytes: 0 };
      if (m[1] === 'total') w.events += Number(m[3]);
      else w.bytes += Number(m[3]);
      out.set(kind, w);
    }
    return out;
  }
}

/** One line per run: the API server's and etcd's CPU per workflow, the top request kinds, the watch traffic. */
export function describeSide(side: ApiServerSide, n: number): string {
  const kinds = [...side.requests]
    .sort((a, b) => b[1].count - a[1].count)
    .slice(0, 8)
    .map(([k, r]) => `${k} ${(r.count / n).toFixed(1)} (${(r.latencyMs / Math.max(1, r.count)).toFixed(1)} ms)`)
    .join(', ');
  const watch = [...side.watch]
    .sort((a, b) => b[1].bytes - a[1].bytes)
    .slice(0, 4)
    .map(([k, w]) => `${k} ${(w.events / n).toFixed(1)} / ${(w.bytes / n / 1024).toFixed(1)} KiB`)
    .join(', ');
  return `API server ${((1000 * side.apiserverCpu) / n).toFixed(1)} ms/wf, etcd ${((1000 * side.etcdCpu) / n).toFixed(1)} ms/wf; requests/wf ${kinds}; watch events/wf ${watch}`;
}
