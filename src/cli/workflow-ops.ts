/**
 * `plugflow logs NAME [-f]`: the step pods' logs, straight from Kubernetes with the user's
 * kubeconfig. (stop, terminate, suspend, resume, resubmit, wait: workflow-operations.ts.)
 *
 * logs: the `main` container of every step pod of the workflow, oldest first, each line
 * prefixed with the step's name, through the pods/log API (a kubelet, or the local runner,
 * serves it).
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { Command } from 'commander';
import { LABEL_COMPONENT, LABEL_WORKFLOW } from '../api/index.js';
import type { KubeClient } from '../kube/client.js';
import { PODS } from '../kube/resource.js';
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
}
