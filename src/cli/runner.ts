/**
 * `plugflow runner`: the local pod runner as a command (a stand-in kubelet for machines
 * without one; `plugflow dev` starts the same thing in-process).
 */
import type { Command } from 'commander';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { PodRunner } from '../runner/runner.js';
import { loadKubeConfig } from '../kube/kubeconfig.js';

export function defaultRunnerDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.PLUGFLOW_CACHE || join(homedir(), '.cache', 'plugflow'), 'runner');
}

export function registerRunnerCommands(program: Command): void {
  program
    .command('runner')
    .description('run the pods bound to a local node as processes (a development stand-in for a kubelet)')
    .option('--kubeconfig <path>', 'kubeconfig to use (default: KUBECONFIG or ~/.kube/config)')
    .option('--context <name>', 'kubeconfig context')
    .option('--node-name <name>', 'name of the Node to register (default: plugflow-<hostname>)')
    .option('--dir <dir>', 'directory for container logs, volumes and the plugflow shim', defaultRunnerDir())
    .option('-n, --namespace <namespace>', 'only run pods of this namespace (default: all namespaces)')
    .option('--no-mount-namespaces', 'run containers without private mount namespaces even where possible')
    .action(
      async (opts: {
        kubeconfig?: string;
        context?: string;
        nodeName?: string;
        dir: string;
        namespace?: string;
        mountNamespaces: boolean;
      }) => {
        const kc = loadKubeConfig(opts.kubeconfig, opts.context);
        const runner = new PodRunner({
          kubeConfig: kc,
          dir: opts.dir,
          nodeName: opts.nodeName,
          namespace: opts.namespace,
          namespaces: opts.mountNamespaces,
        });
        await runner.start();
        await new Promise<void>((resolve) => {
          const stop = () => {
            process.off('SIGINT', stop);
            process.off('SIGTERM', stop);
            runner.stop().then(resolve, resolve);
          };
          process.on('SIGINT', stop);
          process.on('SIGTERM', stop);
        });
      },
    );
}
