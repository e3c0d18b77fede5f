/** The values a key format (`{{workflow.name}}/{{pod.name}}`, …) is rendered with. */

/** Values for the key format: `workflow.name`, `pod.name`, … (see keyVariables). */
export type KeyVariables = Record<string, string>;

/** `workflow.*` and `pod.name` as key formats use them, plus the creation time's parts. */
export function keyVariables(
  workflow: { name: string; namespace: string; uid: string; creationTimestamp?: string },
  podName: string,
): KeyVariables {
  const vars: KeyVariables = {
    'workflow.name': workflow.name,
    'workflow.namespace': workflow.namespace,
    'workflow.uid': workflow.uid,
    'pod.name': podName,
  };
  const t = workflow.creationTimestamp ? new Date(workflow.creationTimestamp) : undefined;
  if (t && !Number.isNaN(t.getTime())) {
    const two = (n: number) => String(n).padStart(2, '0');
    vars['workflow.creationTimestamp'] = t.toISOString();
    vars['workflow.creationTimestamp.Y'] = String(t.getUTCFullYear());
    vars['workflow.creationTimestamp.m'] = two(t.getUTCMonth() + 1);
    vars['workflow.creationTimestamp.d'] = two(t.getUTCDate());
    vars['workflow.creationTimestamp.H'] = two(t.getUTCHours());
    vars['workflow.creationTimestamp.M'] = two(t.getUTCMinutes());
    vars['workflow.creationTimestamp.S'] = two(t.getUTCSeconds());
  }
  return vars;
}
