/**
 * What a list of workflows needs of each (the UI's list, `?summary=true` on the list and watch
 * endpoints): name, labels, times, phase, progress and message. A workflow's spec and nodes are
 * most of its bytes, and a page of a thousand workflows needs none of them.
 */
import type { Workflow } from '../api/index.js';

export interface WorkflowSummary {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name?: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    creationTimestamp?: string;
    labels?: Record<string, string>;
  };
  status: Pick<NonNullable<Workflow['status']>, 'phase' | 'startedAt' | 'finishedAt' | 'progress' | 'message'>;
}

export function summarize(wf: Workflow): WorkflowSummary {
  const md = wf.metadata ?? {};
  const st = wf.status ?? {};
  return {
    apiVersion: wf.apiVersion,
    kind: wf.kind,
    metadata: {
      name: md.name,
      namespace: md.namespace,
      uid: md.uid,
      resourceVersion: md.resourceVersion,
      creationTimestamp: md.creationTimestamp,
      labels: md.labels,
    },
    status: { phase: st.phase, startedAt: st.startedAt, finishedAt: st.finishedAt, progress: st.progress, message: st.message },
  };
}

/** `?summary=true` (also `1`) on a list or watch request. */
export function wantsSummary(query: Record<string, unknown>): boolean {
  const v = query.summary;
  return v === 'true' || v === '1';
}
