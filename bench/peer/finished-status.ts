/**
 * The finished status plugflow's engine stores for the bench's pod-less workflows (a root node,
 * and a node per DAG task): what the floor controller writes and the schema bench patches with.
 */
import { nodeIdFor, taskName } from '../../src/engine/index.js';

export interface Wf {
  metadata: { name: string; namespace: string; uid: string; resourceVersion: string; creationTimestamp?: string };
  spec: {
    entrypoint: string;
    templates: { name: string; dag?: { tasks: { name: string; template: string; dependencies?: string[] }[] } }[];
  };
  status?: { phase?: string };
}

/** The finished status plugflow's engine stores for these workflows: a root node, and a node per DAG task. */
export function finishedStatus(wf: Wf, now: string): Record<string, unknown> {
  const name = wf.metadata.name;
  const entry = wf.spec.templates.find((t) => t.name === wf.spec.entrypoint)!;
  const node = (nodeName: string, display: string, type: string, template: string, extra: Record<string, unknown> = {}) => ({
    id: nodeIdFor(name, nodeName),
    name: nodeName,
    displayName: display,
    type,
    phase: 'Succeeded',
    startedAt: now,
    finishedAt: now,
    templateName: template,
    progress: '1/1',
    message: '',
    ...extra,
  });
  const nodes: Record<string, unknown> = {};
  const tasks = entry.dag?.tasks ?? [];
  const rootId = nodeIdFor(name, name);
  const taskId = (t: string) => nodeIdFor(name, taskName(name, t));
  nodes[rootId] = node(name, name, tasks.length ? 'DAG' : 'Suspend', entry.name, {
    ...(tasks.length
      ? { children: tasks.filter((t) => !t.dependencies).map((t) => taskId(t.name)), progress: `${tasks.length}/${tasks.length}` }
      : {}),
  });
  for (const t of tasks) {
    const children = tasks.filter((o) => o.dependencies?.includes(t.name)).map((o) => taskId(o.name));
    nodes[taskId(t.name)] = node(taskName(name, t.name), t.name, 'Suspend', t.template, {
      boundaryID: rootId,
      ...(children.length ? { children } : {}),
    });
  }
  const progress = tasks.length ? `${tasks.length}/${tasks.length}` : '1/1';
  return { phase: 'Succeeded', startedAt: now, finishedAt: now, progress, nodes };
}
