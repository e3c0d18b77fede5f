/**
 * `plugflow logs NAME [-f]` and `plugflow resume NAME`: operations on a running workflow that
 * go straight to Kubernetes with the user's kubeconfig.
 *
 * logs: the `main` container of every step pod of the workflow, oldest first, each line
 * prefixed with the step's name, through the pods/log API (a kubelet, or the local runner,
 * serves it). resume: marks waiting suspend nodes Succeeded in the workflow's status (through
 * the status subresource, with the resourceVersion, retried on conflict) and clears
 * spec.suspend; the controller carries on from there.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { Command } from 'commander';
import { LABEL_COMPONENT, LABEL_WORKFLOW, type Workflow } from '../api/index.js';
import { resumeWorkflow } from '../engine/resume.js';
import type { KubeClient } from '../kube/client.js';
import { isConflict } from '../kube/errors.js';
import { PODS, WORKFLOWS } from '../kube/resource.js';
import { errorMessage } from '../log/error-message.js';
import { cliClient, loadKubeConfig } from './kube-backend.js';

interface OpsFlags {
  kubeconfig?: string;
  context?: string;
  namespace?: string;
}

/** Runs `fn` with a client for the flags' kubeconfig, closed afterwards. */
async function withClient<T>(flags: OpsFlags, fn: (kube: KubeClient) => Promise<T>): Promise<T> {
  const kube = await cliClient(loadKubeConfig(flags.kubeconfig, flags.context));
  try {
    return await fn(kube);
  } finally {
    await kube.close();
  }
}

/**
 * Prints a log stream line by line, each prefixed; a partial last line waits for more (and is
 * printed when the log ends). UTF-8 characters split across chunks are decoded whole.
 */
export async function printLines(chunks: AsyncIterable<Buffer>, prefix: string, out: (line: string) => void): Promise<void> {
  const decoder = new TextDecoder();
  let rest = '';
  for await (const chunk of chunks) {
    const lines = (rest + decoder.decode(chunk, { stream: true })).split('\n');
    rest = lines.pop() ?? '';
    for (const l of lines) out(`${prefix}${l}`);
  }
  rest += decoder.decode();
  if (rest) out(`${prefix}${rest}`);
}

function stepPods(pods: V1Pod[]): V1Pod[] {
  return pods
    .filter((p) => p.metadata?.labels?.[LABEL_COMPONENT] !== 'agent')
    .sort((a, b) => String(a.metadata?.creationTimestamp ?? '').localeCompare(String(b.metadata?.creationTimestamp ?? '')));
}

export async function runLogs(
  name: string,
  flags: OpsFlags & { follow?: boolean; container?: string },
  out = (l: string) => console.log(l),
): Promise<number> {
  const namespace = flags.namespace ?? 'default';
  return withClient(flags, async (kube) => {
    const list = await kube.list<V1Pod>(PODS, { namespace, labelSelector: `${LABEL_WORKFLOW}=${name}` }).catch((err: unknown) => {
      throw new Error(`listing the pods of workflow ${namespace}/${name}: ${errorMessage(err)}`);
    });
    const pods = stepPods(list.items);
    if (pods.length === 0) {
      out(`workflow ${namespace}/${name} has no step pods (yet)`);
      return 0;
    }
    const width = Math.max(...pods.map((p) => p.metadata!.name!.length));
    const print = async (pod: V1Pod) => {
      const podName = pod.metadata!.name!;
      const prefix = `${podName.padEnd(width)} | `;
      try {
        await printLines(
          await kube.podLog(namespace, podName, { container: flags.container ?? 'main', follow: flags.follow ?? false }),
          prefix,
          out,
        );
      } catch (err) {
        out(`${prefix}(no log: ${errorMessage(err)})`);
      }
    };
    // Following, every pod streams at once; otherwise the logs print whole, one pod after another.
    if (flags.follow) await Promise.all(pods.map(print));
    else for (const pod of pods) await print(pod);
    return 0;
  });
}

export async function runResume(
  name: string,
  flags: OpsFlags & { node?: string; parameter?: string[] },
  out = (l: string) => console.log(l),
): Promise<number> {
  const namespace = flags.namespace ?? 'default';
  const parameters: Record<string, string> = {};
  for (const p of flags.parameter ?? []) {
    const eq = p.indexOf('=');
    if (eq <= 0) throw new Error(`-p expects name=value, got "${p}"`);
    parameters[p.slice(0, eq)] = p.slice(eq + 1);
  }
  return withClient(flags, async (kube) => {
    for (let attempt = 0; ; attempt++) {
      const wf = await kube.get<Workflow>(WORKFLOWS, namespace, name).catch((err: unknown) => {
        throw new Error(`reading Workflow ${namespace}/${name}: ${errorMessage(err)}`);
      });
      const { status, resumed } = resumeWorkflow(wf.status, { now: new Date().toISOString(), node: flags.node, parameters });
      if (resumed.length === 0 && !wf.spec?.suspend) {
        out(`Workflow ${namespace}/${name}: nothing is waiting to be resumed`);
        return 1;
      }
      try {
        // The replace carries the resourceVersion read above: a concurrent change is a 409, retried.
        if (resumed.length > 0) await kube.replace(WORKFLOWS, namespace, name, { ...wf, status }, 'status');
        if (wf.spec?.suspend) await kube.mergePatch(WORKFLOWS, namespace, name, { spec: { suspend: null } });
        out(`Workflow ${namespace}/${name} resumed${resumed.length ? `: ${resumed.join(', ')}` : ''}`);
        return 0;
      } catch (err) {
        if (isConflict(err) && attempt < 5) continue;
        throw new Error(`resuming Workflow ${namespace}/${name}: ${errorMessage(err)}`);
      }
    }
  });
}

const collect = (v: string, prev: string[]) => [...prev, v];
const done = (code: number) => {
  process.exitCode = code;
};

export function registerWorkflowOpsCommands(program: Command): void {
  program
    .command('logs <name>')
    .description("print the logs of a workflow's step pods (main containers), oldest first")
    .option('-f, --follow', 'keep streaming until the pods finish')
    .option('-c, --container <name>', 'another container than main (e.g. wait)')
    .option('-n, --namespace <ns>', 'namespace', 'default')
    .option('--kubeconfig <path>', 'kubeconfig (default: $KUBECONFIG or ~/.kube/config)')
    .option('--context <name>', 'kubeconfig context')
    .action(async (name: string, flags) => done(await runLogs(name, flags)));
  program
    .command('resume <name>')
    .description('resume a suspended workflow (all waiting suspend steps, or one with --node)')
    .option('--node <name>', 'resume only the suspend step with this name or display name')
    .option('-p, --parameter <name=value>', 'value of an output parameter declared with valueFrom.supplied (repeatable)', collect, [])
    .option('-n, --namespace <ns>', 'namespace', 'default')
    .option('--kubeconfig <path>', 'kubeconfig (default: $KUBECONFIG or ~/.kube/config)')
    .option('--context <name>', 'kubeconfig context')
    .action(async (name: string, flags) => done(await runResume(name, flags)));
}
