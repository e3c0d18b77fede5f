import { Command } from 'commander';

/**
 * The `plugflow` command. Each concern registers its own subcommands from its own module
 * (src/cli/<concern>.ts), so this file stays a list.
 */
export function buildProgram(): Command {
  const program = new Command('plugflow')
    .description('plugflow: Kubernetes workflows whose steps run as pods or through executor plugins')
    .version('0.1.0')
    .showHelpAfterError();
  return program;
}

buildProgram()
  .parseAsync(process.argv)
  .catch((err: unknown) => {
    console.error(`plugflow: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  });
