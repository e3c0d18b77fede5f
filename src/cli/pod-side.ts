/**
 * `plugflow executor …`: the commands that run inside a step pod (see src/pods/layout.ts).
 *   install DIR   init container: copy the emissary into the shared volume, fetch input artifacts
 *   gc            artifact GC pod: delete a workflow's stored artifacts
 *   wait          wait container: report the main container's outputs in the termination message
 *   data          main container of a data template: list, transform, print the JSON result
 *   manifest PATH main container of a resource template's manifestFrom pod: print the manifest
 */
import type { Command } from 'commander';
import { readFileSync, writeFileSync } from 'node:fs';
import { installEmissary } from '../pod-side/install.js';
import { outputsFromEnv, runWait } from '../pod-side/wait.js';
import { fetchInputs, inputPlansFromEnv } from '../pod-side/input-artifacts.js';
import { outputPlansFromEnv } from '../pod-side/output-artifacts.js';
import { runArtifactGC } from '../pod-side/artifact-gc.js';
import { dataPlanFromEnv, runData } from '../pod-side/data.js';
import { readManifestFile } from '../pod-side/manifest.js';
import { DEFAULT_TERMINATION_MESSAGE_PATH, ENV_VAR_DIR, VAR_DIR } from '../pods/layout.js';
import { encodeWaitReport } from '../pods/wait-report.js';
import { errorMessage } from '../log/error-message.js';
import { reportStoreRetries } from '../artifacts/store-error.js';

/** A store request being retried, in the container's log (the pod cannot tell the controller while it runs). */
const logRetry = (line: string) => console.error(`retrying: ${line}`);

export function registerPodSideCommands(program: Command): void {
  const executor = program.command('executor').description('commands run inside step pods (init and wait containers)');

  executor
    .command('install')
    .description("copy the emissary binary into DIR (the step pod's shared volume)")
    .argument('<dir>', 'target directory')
    .option('--termination-log <path>', 'where a failure is reported', DEFAULT_TERMINATION_MESSAGE_PATH)
    .action(async (dir: string, opts: { terminationLog: string }) => {
      reportStoreRetries(logRetry);
      const target = installEmissary(dir);
      console.log(`installed ${target}`);
      // Input artifacts: fetched before the main container starts (it mounts them at their paths).
      try {
        for (const line of await fetchInputs(dir, inputPlansFromEnv())) console.log(line);
      } catch (err) {
        const why = errorMessage(err);
        console.error(`plugflow executor install: ${why}`);
        // The kubelet shows this file as the container's message (the log only when it is empty).
        try {
          writeFileSync(opts.terminationLog, why.slice(0, 4000));
        } catch {
          // not writable (run outside a pod): the log line above says it
        }
        process.exitCode = 1;
      }
    });

  executor
    .command('data')
    .description("list the objects of a data template's source and print its transformation's result as JSON")
    .action(async () => {
      reportStoreRetries(logRetry);
      try {
        console.log(await runData(dataPlanFromEnv()));
      } catch (err) {
        console.error(`plugflow executor data: ${errorMessage(err)}`);
        process.exitCode = 1;
      }
    });

  executor
    .command('manifest')
    .description("print a resource template's manifest, fetched as an input artifact to PATH, for the controller to apply")
    .argument('<path>', 'where the artifact was placed')
    .action((path: string) => {
      try {
        process.stdout.write(readManifestFile(path));
      } catch (err) {
        console.error(`plugflow executor manifest: ${errorMessage(err)}`);
        process.exitCode = 1;
      }
    });

  executor
    .command('gc')
    .description("delete a workflow's stored artifacts (the artifact GC pod), reporting in the termination message")
    .option('--termination-log <path>', 'where to write the report', DEFAULT_TERMINATION_MESSAGE_PATH)
    .action(async (opts: { terminationLog: string }) => {
      reportStoreRetries(logRetry);
      const report = await runArtifactGC(opts.terminationLog);
      console.log(`deleted ${report.deleted} objects${report.errors.length ? `; ${report.errors.length} failed:` : ''}`);
      for (const e of report.errors) console.error(e);
      if (report.errors.length) process.exitCode = 1;
    });

  executor
    .command('wait')
    .description('wait for the main container, then write its outputs to the termination message file')
    .option('--dir <dir>', 'the shared volume', process.env[ENV_VAR_DIR] || VAR_DIR)
    .option('--termination-log <path>', 'where to write the report', DEFAULT_TERMINATION_MESSAGE_PATH)
    .action(async (opts: { dir: string; terminationLog: string }) => {
      reportStoreRetries(logRetry);
      const stop = new AbortController();
      // The wait container is PID 1 of its container: without a handler it would ignore SIGTERM
      // and hold the pod's deletion for the whole grace period.
      const onSignal = () => stop.abort();
      process.once('SIGTERM', onSignal);
      process.once('SIGINT', onSignal);
      let code: number;
      try {
        code = await runWait({
          dir: opts.dir,
          terminationLog: opts.terminationLog,
          outputs: outputsFromEnv(),
          artifacts: outputPlansFromEnv(),
          log: (line) => console.log(line),
          signal: stop.signal,
        });
        // The same report in the container's log, for people reading `kubectl logs -c wait`.
        console.log(readFileSync(opts.terminationLog, 'utf8'));
      } catch (err) {
        const why = stop.signal.aborted ? 'the wait container was stopped before the main container finished' : errorMessage(err);
        writeFileSync(opts.terminationLog, encodeWaitReport({ exitCode: -1, parameters: [], error: why }));
        console.error(`plugflow executor wait: ${why}`);
        code = stop.signal.aborted ? 143 : 1;
      }
      process.exitCode = code;
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
    });
}
