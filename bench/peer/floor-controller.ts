/**
 * The API floor of a Node.js controller: a process that makes exactly the API traffic plugflow's
 * controller makes for a pod-less workflow, and nothing else. It lists and watches workflows (every
 * event parsed, as an informer does), and for each new one sends the three writes plugflow sends
 * — the finished status (a conditional status patch), the phase labels, and the WorkflowSucceeded
 * Event (through plugflow's recorder) — with the same HTTP client (src/kube/client.ts), 8
 * workflows in flight like the controller's 8 workers. There is no engine, no cache, no
 * validation and no logging.
 *
 * Its CPU per workflow is what any controller written on Node.js and this client pays for those
 * round trips; peer-bench.ts runs it beside plugflow (engine `floor`), so that plugflow's CPU can be
 * split into this floor and what plugflow adds on top of it.
 *
 *   node --import tsx bench/peer/floor-controller.ts KUBECONFIG
 */
import { LABEL_COMPLETED, LABEL_PHASE } from '../../src/api/index.js';
import { nodeIdFor, taskName } from '../../src/engine/index.js';
import { loadKubeAccess } from '../../src/kube/kube-access.js';
import { KubeClient } from '../../src/kube/client.js';
import type { ResourceType } from '../../src/kube/resource.js';
import { createLogger } from '../../src/log/logger.js';
import { EventRecorder } from '../../src/kube/event-recorder.js';
import { workflowType } from './workloads.js';

interface Wf {
  metadata: { name: string; namespace: string; uid: string; resourceVersion: string; creationTimestamp?: string };
  spec: {
    entrypoint: string;
    templates: { name: string; dag?: { tasks: { name: string; template: string; dependencies?: string[] }[] } }[];
  };
  status?: { phase?: string };
}

const WORKFLOWS: ResourceType = workflowType('plugflow.io');
const WORKERS = 8;

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

async function main(): Promise<void> {
  const client = await KubeClient.fromKubeConfig(await loadKubeAccess(process.argv[2]));
  // Logs only an Event it could not send.
  const events = new EventRecorder({ client, log: createLogger('floor'), component: 'plugflow-controller', instance: 'floor' });
  const queue: Wf[] = [];
  const idle: (() => void)[] = [];
  const offer = (wf: Wf) => {
    if (wf.status?.phase) return; // finished already, or the echo of one of our writes
    queue.push(wf);
    idle.shift()?.();
  };
  const worker = async (): Promise<void> => {
    for (;;) {
      const wf = queue.shift();
      if (!wf) {
        await new Promise<void>((r) => idle.push(r));
        continue;
      }
      const { namespace, name, resourceVersion } = wf.metadata;
      const now = new Date().toISOString();
      await client.mergePatch(WORKFLOWS, namespace, name, { metadata: { resourceVersion }, status: finishedStatus(wf, now) }, 'status');
      // plugflow's own recorder: the same Event, not waited for.
      events.record(wf, 'Normal', 'WorkflowSucceeded', 'Workflow succeeded');
      await client.mergePatch(WORKFLOWS, namespace, name, {
        metadata: { labels: { [LABEL_PHASE]: 'Succeeded', [LABEL_COMPLETED]: 'true' } },
      });
    }
  };
  for (let i = 0; i < WORKERS; i++) void worker();
  const abort = new AbortController();
  process.on('SIGTERM', () => {
    abort.abort();
    process.exit(0);
  });
  for (;;) {
    const list = await client.list<Wf>(WORKFLOWS, {});
    for (const wf of list.items) offer(wf);
    await client.watch(
      WORKFLOWS,
      { resourceVersion: list.metadata?.resourceVersion, timeoutSeconds: 300 },
      (e) => {
        if (e.type === 'ADDED' || e.type === 'MODIFIED') offer(e.object as unknown as Wf);
      },
      abort.signal,
    );
  }
}

await main();
