/**
 * The "progress" executor plugin, written with the plugflow SDK: a job that needs several polls.
 *
 *   plugin:
 *     progress:
 *       steps: 3        # polls until done (default 3)
 *       every: 2s       # requeue interval (default 1s)
 *
 * The first call starts the job and answers Running, progress 1/3, requeue 2s; each later call
 * advances one step; the last answers Succeeded, progress 3/3, with the output parameter `steps`.
 * Jobs are keyed by workflow uid and template, so retries of the same template continue the job.
 *
 * Run: PLUGIN_PORT=7422 PLUGIN_TOKEN_PATH=/tmp/token npx tsx examples/plugins/progress/main.ts
 */
import { pathToFileURL } from 'node:url';
import { failed, outputParameters, running, servePlugin, succeeded, type PluginContext, type RunningPlugin } from 'plugflow/sdk';

export interface ProgressConfig {
  steps?: number;
  every?: string;
}

export interface ProgressPluginOptions {
  port?: number;
  host?: string;
  tokenPath?: string;
}

/** Starts the plugin; `done` counts the polls each job has had. */
export async function startProgressPlugin(opts: ProgressPluginOptions = {}): Promise<RunningPlugin & { jobs: Map<string, number> }> {
  const jobs = new Map<string, number>();
  const plugin = await servePlugin<ProgressConfig | null>({
    name: 'progress',
    port: opts.port ?? 7422,
    host: opts.host ?? '127.0.0.1',
    tokenPath: opts.tokenPath,
    execute: (config, ctx: PluginContext) => {
      const steps = config?.steps ?? 3;
      if (!Number.isInteger(steps) || steps < 1)
        return failed(`plugin.progress.steps must be a positive integer, got ${JSON.stringify(steps)}`);
      const key = `${ctx.workflow.uid}/${JSON.stringify(ctx.template)}`;
      const done = (jobs.get(key) ?? 0) + 1;
      jobs.set(key, done);
      if (done < steps) {
        return running(`step ${done} of ${steps} done`, { progress: `${done}/${steps}`, requeue: config?.every ?? '1s' });
      }
      jobs.delete(key);
      return succeeded(`all ${steps} steps done`, { progress: `${steps}/${steps}`, outputs: outputParameters({ steps: String(steps) }) });
    },
  });
  return Object.assign(plugin, { jobs });
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const p = await startProgressPlugin({
    port: Number(process.env.PLUGIN_PORT ?? 7422),
    host: process.env.PLUGIN_HOST,
    tokenPath: process.env.PLUGIN_TOKEN_PATH,
  });
  console.log(`progress plugin listening on ${p.url}`);
  process.once('SIGTERM', () => void p.close().then(() => process.exit(0)));
}
