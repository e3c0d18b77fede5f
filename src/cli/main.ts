import { Command } from 'commander';
import { registerAgentCommands } from './agent.js';
import { registerControllerCommands } from './controller.js';
import { registerDevCommands } from './dev.js';
import { registerEventCommands } from './event.js';
import { registerExprCommands } from './expr.js';
import { registerPodSideCommands } from './pod-side.js';
import { registerRunnerCommands } from './runner.js';
import { registerPluginCommands } from './plugin.js';
import { registerWorkflowCommands } from './rest.js';
import { registerWorkflowOpsCommands } from './workflow-ops.js';
import { registerServerCommands } from './server.js';

/**
 * The `plugflow` command. Each concern registers its own subcommands from its own module
 * (src/cli/<concern>.ts), so this file stays a list.
 */
export function buildProgram(): Command {
  const program = new Command('plugflow')
    .description('plugflow: Kubernetes workflows whose steps run as pods or through executor plugins')
    .version('0.1.0')
    .showHelpAfterError();
  registerPluginCommands(program);
  registerAgentCommands(program);
  registerControllerCommands(program);
  registerServerCommands(program);
  registerWorkflowCommands(program);
  registerWorkflowOpsCommands(program);
  registerDevCommands(program);
  registerEventCommands(program);
  registerExprCommands(program);
  registerPodSideCommands(program);
  registerRunnerCommands(program);
  return program;
}

buildProgram()
  .parseAsync(process.argv)
  .catch((err: unknown) => {
    console.error(`plugflow: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  });
