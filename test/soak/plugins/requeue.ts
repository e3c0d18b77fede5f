/**
 * Soak plugin "soak-requeue": a job that needs several polls. `plugin: {soak-requeue: {polls: 3,
 * every: "500ms"}}` answers Running with a requeue until the job has been polled `polls` times,
 * then Succeeded with the output parameter `polls`. Jobs are keyed by workflow uid and template,
 * and live in memory: a sidecar that is killed and started again starts the job over, which is
 * still a correct answer.
 */
import { pathToFileURL } from 'node:url';
import { outputParameters, running, servePlugin, succeeded } from '../../../src/sdk/index.js';
import { runAsSidecar } from './sidecar.js';

export interface RequeueConfig {
  polls?: number;
  every?: string;
}

export const REQUEUE = 'soak-requeue';

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const jobs = new Map<string, number>();
  await runAsSidecar(REQUEUE, (port) =>
    servePlugin<RequeueConfig | null>({
      name: REQUEUE,
      port,
      execute: (config, ctx) => {
        const polls = config?.polls ?? 3;
        const key = `${ctx.workflow.uid}/${ctx.template.name}`;
        const done = (jobs.get(key) ?? 0) + 1;
        if (done < polls) {
          jobs.set(key, done);
          return running(`poll ${done} of ${polls}`, { progress: `${done}/${polls}`, requeue: config?.every ?? '500ms' });
        }
        jobs.delete(key);
        return succeeded(`done after ${polls} polls`, {
          progress: `${polls}/${polls}`,
          outputs: outputParameters({ polls: String(polls) }),
        });
      },
    }),
  );
}
