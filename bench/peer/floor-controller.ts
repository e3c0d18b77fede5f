/**
 * The API floor of a Node.js controller: a process that makes exactly the API traffic plugflow's
 * controller makes for a pod-less workflow, and nothing else. It lists and watches workflows (every
 * event parsed, as an informer does), and for each new one sends the two writes plugflow sends
 * — the finished status with its phase labels (one conditional patch), and the WorkflowSucceeded
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
import { loadKubeAccess } from '../../src/kube/kube-access.js';
import { KubeClient } from '../../src/kube/client.js';
import type { ResourceType } from '../../src/kube/resource.js';
import { createLogger } from '../../src/log/logger.js';
import { EventRecorder } from '../../src/kube/event-recorder.js';
import { workflowType } from './workloads.js';
import { finishedStatus, type Wf } from './finished-status.js';

const WORKFLOWS: ResourceType = workflowType('plugflow.io');
const WORKERS = 8;

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
      // The status and its labels in one conditional patch, as plugflow writes them (status-writer.ts).
      const labels = { [LABEL_PHASE]: 'Succeeded', [LABEL_COMPLETED]: 'true' };
      await client.mergePatch(WORKFLOWS, namespace, name, { metadata: { resourceVersion, labels }, status: finishedStatus(wf, now) });
      // plugflow's own recorder: the same Event, not waited for.
      events.record(wf, 'Normal', 'WorkflowSucceeded', 'Workflow succeeded');
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
