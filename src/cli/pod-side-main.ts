/**
 * A small entry point with only `plugflow executor …`, for the containers of step pods: the
 * full CLI loads every subsystem (Kubernetes client, HTTP server, ...) and takes seconds to
 * start, which the init and wait containers of every step would pay. The local runner's
 * `plugflow` shim sends `executor` commands here; an image can do the same.
 */
import { Command } from 'commander';
import { registerPodSideCommands } from './pod-side.js';

const program = new Command('plugflow').description('plugflow executor commands').showHelpAfterError();
registerPodSideCommands(program);
program.parseAsync(process.argv).catch((err: unknown) => {
  console.error(`plugflow: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
