/**
 * `plugflow plugin build DIR` and `plugflow plugin check URL`.
 */
import type { Command } from 'commander';
import { PluginBuildError } from '../plugins/index.js';
import { buildPluginDir } from '../plugins/index.js';
import { checkPlugin, type CheckResult } from '../sdk/index.js';

/** Output sink, so tests can capture what a command prints. */
export interface Printer {
  out(line: string): void;
  err(line: string): void;
}

const consolePrinter: Printer = { out: (l) => console.log(l), err: (l) => console.error(l) };

/** Builds a plugin directory and prints what it wrote; returns the exit code. */
export function runPluginBuild(dir: string, p: Printer = consolePrinter): number {
  try {
    const res = buildPluginDir(dir);
    for (const w of res.warnings) p.err(`warning: ${w}`);
    p.out(`plugin ${res.pluginName}${res.serverFile ? ` (server file ${res.serverFile} → sidecar args)` : ''}:`);
    for (const f of res.written) p.out(`  wrote ${f}`);
    return 0;
  } catch (err) {
    if (err instanceof PluginBuildError) {
      p.err(`${err.source} cannot be built:`);
      for (const problem of err.problems) p.err(`  ${problem}`);
      return 1;
    }
    throw err;
  }
}

/** Probes a running plugin and prints one PASS/FAIL line per rule; returns the exit code. */
export async function runPluginCheck(
  url: string,
  o: { token: string; plugin: string; config?: string; timeout?: string },
  p: Printer = consolePrinter,
): Promise<number> {
  let config: unknown = {};
  if (o.config !== undefined) {
    try {
      config = JSON.parse(o.config);
    } catch {
      p.err(`--config must be JSON, got ${o.config}`);
      return 2;
    }
  }
  const results: CheckResult[] = await checkPlugin(url, {
    token: o.token,
    plugin: o.plugin,
    config,
    timeoutMs: o.timeout ? Number(o.timeout) * 1000 : undefined,
  });
  for (const r of results) p.out(`${r.ok ? 'PASS' : 'FAIL'}  ${r.check}: ${r.detail}`);
  const failedCount = results.filter((r) => !r.ok).length;
  p.out(failedCount === 0 ? `all ${results.length} checks passed` : `${failedCount} of ${results.length} checks failed`);
  return failedCount === 0 ? 0 : 1;
}

export function registerPluginCommands(program: Command): void {
  const plugin = program.command('plugin').description('build and check executor plugins');
  plugin
    .command('build')
    .argument('<dir>', 'directory holding plugin.yaml and optionally one server.<ext>')
    .description('turn DIR/plugin.yaml (+ server.*) into DIR/<name>-executor-plugin-configmap.yaml and DIR/README.md')
    .action((dir: string) => {
      process.exitCode = runPluginBuild(dir);
    });
  plugin
    .command('check')
    .argument('<url>', 'base address of a running plugin, e.g. http://localhost:4355')
    .requiredOption('--token <token>', 'the token the plugin reads from its token file')
    .requiredOption('--plugin <name>', "the plugin's name (the key of the template's plugin section)")
    .option('--config <json>', 'value under the plugin key in the probe template', undefined)
    .option('--timeout <seconds>', 'per-request timeout', '10')
    .description('probe a running plugin for the protocol rules (403, 404, {}, a well-formed node)')
    .action(async (url: string, o: { token: string; plugin: string; config?: string; timeout?: string }) => {
      process.exitCode = await runPluginCheck(url, o);
    });
}
