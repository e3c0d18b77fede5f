/**
 * `plugflow agent` (the main container of the agent pod) and `plugflow agent init` (its init
 * container, which writes the plugin tokens). The arguments are built by
 * src/pods/agent-pod.ts; see there for the pod layout.
 */
import { type Command, InvalidArgumentError } from 'commander';
import { Agent } from '../agent/agent.js';
import { evaluateSuccessCondition } from '../agent/condition.js';
import type { PluginTarget } from '../agent/plugin-client.js';
import { readPluginToken, writePluginTokens } from '../agent/tokens.js';
import { KubeClient } from '../kube/client.js';
import { createLogger } from '../log/logger.js';
import { AGENT_TOKEN_DIR, DEFAULT_AGENT_HEALTH_PORT } from '../plugins/index.js';
import { loadKubeAccess } from '../kube/kube-access.js';
import { startHealthServer } from '../kube/health-server.js';

interface AgentFlags {
  workflow: string;
  namespace: string;
  workflowUid: string;
  tokenDir: string;
  plugin: string[];
  healthPort: string;
  concurrency: string;
  kubeconfig?: string;
}

const collect = (v: string, acc: string[]): string[] => [...acc, v];

/** `name=http://host:port` → name and address. */
export function parsePluginFlag(v: string): { name: string; address: string } {
  const eq = v.indexOf('=');
  if (eq <= 0) throw new InvalidArgumentError(`--plugin must be NAME=URL, got ${JSON.stringify(v)}`);
  const name = v.slice(0, eq);
  const address = v.slice(eq + 1);
  try {
    new URL(address);
  } catch {
    throw new InvalidArgumentError(`--plugin ${name}: ${JSON.stringify(address)} is not a URL`);
  }
  return { name, address };
}

export async function runAgent(flags: AgentFlags): Promise<number> {
  const log = createLogger('agent');
  const plugins: PluginTarget[] = flags.plugin.map((p) => {
    const { name, address } = parsePluginFlag(p);
    return { name, address, token: readPluginToken(flags.tokenDir, name) };
  });
  const kc = await loadKubeAccess(flags.kubeconfig);
  const kube = await KubeClient.fromKubeConfig(kc, { userAgent: 'plugflow-agent' });
  const agent = new Agent({
    kube,
    workflow: { name: flags.workflow, namespace: flags.namespace, uid: flags.workflowUid },
    plugins,
    log,
    evaluate: evaluateSuccessCondition,
    concurrency: Number(flags.concurrency),
  });
  // /healthz: the process is alive; /readyz: its TaskSet watch has synced; on a port of its own so
  // the kubelet's probes never queue behind plugin work.
  const registry = agent.metrics.registry;
  const health = await startHealthServer(
    {
      live: () => undefined,
      ready: () => (agent.ready() ? [] : ['the TaskSet watch has not synced yet']),
      metrics: () => registry.metrics(),
      metricsContentType: registry.contentType,
    },
    Number(flags.healthPort),
  );
  const onSignal = (sig: string) => {
    log.info('signal received', { signal: sig });
    void agent.stop('stopped');
  };
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  const reason = await agent.run();
  await health.close();
  await kube.close();
  log.info('agent stopped', { reason });
  return 0;
}

/** `plugflow agent init`: one fresh random token per plugin, written to `<dir>/<plugin>/token`. */
export function runAgentInit(tokenDir: string, plugins: string[]): number {
  const log = createLogger('agent-init');
  // `--plugin` may be given as NAME or NAME=URL (the main container's form).
  const names = plugins.map((p) => (p.includes('=') ? p.slice(0, p.indexOf('=')) : p));
  const files = writePluginTokens(tokenDir, names);
  // Paths only; the tokens themselves never leave the files.
  log.info('plugin tokens written', { plugins: names, files });
  return 0;
}

/**
 * One command with an optional mode argument rather than an `init` subcommand: commander lets a
 * parent command's options swallow a subcommand's options of the same name (`--token-dir`,
 * `--plugin`), which would silently write tokens to the default directory.
 */
export function registerAgentCommands(program: Command): void {
  program
    .command('agent')
    .argument('[mode]', '"init" to write the plugin tokens (the agent pod init container); omit to run the agent')
    .description("run a workflow's plugin and http tasks (the main container of the agent pod)")
    .option('--workflow <name>', 'workflow name (also the TaskSet name)')
    .option('--namespace <ns>', 'workflow namespace')
    .option('--workflow-uid <uid>', 'workflow uid (sent to plugins)', '')
    .option('--token-dir <dir>', 'directory with <plugin>/token files', AGENT_TOKEN_DIR)
    .option('--plugin <name=url>', 'a plugin and its address (init: its name); repeat for each', collect, [])
    .option('--health-port <port>', 'port of /healthz, /readyz and /metrics', String(DEFAULT_AGENT_HEALTH_PORT))
    .option('--concurrency <n>', 'plugin/http calls in flight at once', '16')
    .option('--kubeconfig <path>', 'kubeconfig (default: KUBECONFIG, ~/.kube/config, then in-cluster)')
    .action(async (mode: string | undefined, flags: AgentFlags) => {
      if (mode === 'init') {
        process.exitCode = runAgentInit(flags.tokenDir, flags.plugin);
        return;
      }
      if (mode !== undefined) throw new InvalidArgumentError(`unknown mode ${JSON.stringify(mode)}; use "init" or nothing`);
      if (!flags.workflow || !flags.namespace) throw new InvalidArgumentError('--workflow and --namespace are required');
      process.exitCode = await runAgent(flags);
    });
}
