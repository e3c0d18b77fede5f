import { Command } from 'commander';

/**
 * plugflow's release, as `--version` says it. The same as src/api's PLUGFLOW_RELEASE (what the
 * server's /api/v1/version answers; version.test.ts holds them equal): written here because this
 * file loads nothing but commander before a command is chosen.
 */
const RELEASE = '0.1.0';

/**
 * The `plugflow` command. Each concern registers its own subcommands from its own module
 * (src/cli/<concern>.ts), so this file stays a list.
 */
export async function buildProgram(): Promise<Command> {
  const program = new Command('plugflow')
    .description('plugflow: Kubernetes workflows whose steps run as pods or through executor plugins')
    .version(RELEASE)
    .showHelpAfterError();
  const modules = await Promise.all([
    import('./plugin.js').then((m) => m.registerPluginCommands),
    import('./agent.js').then((m) => m.registerAgentCommands),
    import('./controller.js').then((m) => m.registerControllerCommands),
    import('./server.js').then((m) => m.registerServerCommands),
    import('./rest.js').then((m) => m.registerWorkflowCommands),
    import('./archive.js').then((m) => m.registerArchiveCommands),
    import('./workflow-ops.js').then((m) => m.registerWorkflowOpsCommands),
    import('./workflow-operations.js').then((m) => m.registerWorkflowOperationCommands),
    import('./lint.js').then((m) => m.registerLintCommands),
    import('./templates.js').then((m) => m.registerTemplateCommands),
    import('./cron.js').then((m) => m.registerCronCommands),
    import('./cp.js').then((m) => m.registerCopyCommands),
    import('./dev.js').then((m) => m.registerDevCommands),
    import('./event.js').then((m) => m.registerEventCommands),
    import('./expr.js').then((m) => m.registerExprCommands),
    import('./pod-side.js').then((m) => m.registerPodSideCommands),
    import('./runner.js').then((m) => m.registerRunnerCommands),
  ]);
  for (const register of modules) register(program);
  return program;
}

/**
 * The long-running processes load only their own command: the full program imports every
 * subsystem (the dev stack, the CLI's kubeconfig loader — client-node with all its generated
 * models), about 70 MiB that a controller, server or agent pod never uses (bench/RESULTS.md,
 * "peer": idle RSS). `plugflow --help` and every other command still see the whole program.
 */
const PROCESS_COMMANDS: Record<string, () => Promise<(program: Command) => void>> = {
  controller: async () => (await import('./controller.js')).registerControllerCommands,
  server: async () => (await import('./server.js')).registerServerCommands,
  agent: async () => (await import('./agent.js')).registerAgentCommands,
};

async function programFor(argv: string[]): Promise<Command> {
  const only = Object.hasOwn(PROCESS_COMMANDS, argv[2] ?? '') ? PROCESS_COMMANDS[argv[2]!] : undefined;
  if (!only) return buildProgram();
  const program = new Command('plugflow').version(RELEASE).showHelpAfterError();
  (await only())(program);
  return program;
}

programFor(process.argv)
  .then((program) => program.parseAsync(process.argv))
  .catch((err: unknown) => {
    console.error(`plugflow: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  });
