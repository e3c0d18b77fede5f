/**
 * Which pending pods the local runner may bind to its node. It stands in for the scheduler
 * on a one-node cluster, so it honours the parts of scheduling that decide whether a pod can
 * run here at all: schedulerName, nodeName, nodeSelector, required node affinity and the node's
 * taints (with the pod's tolerations). Preferences, pod (anti-)affinity and resources are
 * ignored: with one node there is nothing to choose between.
 */
import type { V1Node, V1NodeSelectorRequirement, V1NodeSelectorTerm, V1Pod, V1Taint, V1Toleration } from '@kubernetes/client-node';

export const DEFAULT_SCHEDULER = 'default-scheduler';

/** Returns why the pod cannot be bound to the node, or undefined when it can. */
export function unschedulableReason(pod: V1Pod, node: V1Node, schedulers: readonly string[] = [DEFAULT_SCHEDULER]): string | undefined {
  const spec = pod.spec;
  if (!spec) return 'the pod has no spec';
  const scheduler = spec.schedulerName || DEFAULT_SCHEDULER;
  if (!schedulers.includes(scheduler))
    return `schedulerName "${scheduler}" is not served by this runner (it serves ${schedulers.join(', ')})`;
  const labels = node.metadata?.labels ?? {};
  for (const [k, v] of Object.entries(spec.nodeSelector ?? {})) {
    if (labels[k] !== v) return `node ${node.metadata?.name} does not match nodeSelector ${k}=${v}`;
  }
  const required = spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
  if (required && required.nodeSelectorTerms?.length && !required.nodeSelectorTerms.some((t) => termMatches(t, node))) {
    return `node ${node.metadata?.name} does not match the pod's required node affinity`;
  }
  for (const taint of node.spec?.taints ?? []) {
    if (taint.effect === 'PreferNoSchedule') continue;
    if (!(spec.tolerations ?? []).some((t) => tolerates(t, taint)))
      return `the pod does not tolerate the node's taint ${taint.key}=${taint.value ?? ''}:${taint.effect}`;
  }
  return undefined;
}

function termMatches(term: V1NodeSelectorTerm, node: V1Node): boolean {
  const exprs = term.matchExpressions ?? [];
  const fields = term.matchFields ?? [];
  // An empty term matches nothing (as in Kubernetes).
  if (exprs.length === 0 && fields.length === 0) return false;
  const labels = node.metadata?.labels ?? {};
  return (
    exprs.every((r) => requirementMatches(r, labels)) &&
    fields.every((r) => requirementMatches(r, { 'metadata.name': node.metadata?.name ?? '' }))
  );
}

export function requirementMatches(r: V1NodeSelectorRequirement, labels: Record<string, string>): boolean {
  const has = Object.hasOwn(labels, r.key);
  const value = labels[r.key];
  const values = r.values ?? [];
  switch (r.operator) {
    case 'In':
      return has && values.includes(value);
    case 'NotIn':
      return !has || !values.includes(value);
    case 'Exists':
      return has;
    case 'DoesNotExist':
      return !has;
    case 'Gt':
    case 'Lt': {
      if (!has || values.length !== 1) return false;
      const [a, b] = [Number.parseInt(value, 10), Number.parseInt(values[0], 10)];
      if (!Number.isFinite(a) || !Number.isFinite(b)) return false;
      return r.operator === 'Gt' ? a > b : a < b;
    }
    default:
      return false;
  }
}

function tolerates(t: V1Toleration, taint: V1Taint): boolean {
  if (t.effect && t.effect !== taint.effect) return false;
  if (t.operator === 'Exists') return !t.key || t.key === taint.key;
  return t.key === taint.key && (t.value ?? '') === (taint.value ?? '');
}
