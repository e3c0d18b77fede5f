/**
 * What the caller may do in a namespace, so a UI can disable an action and say why before the
 * caller tries it:
 *
 *   GET /api/v1/access/{namespace}  → {actions: {submit: {allowed: true}, delete: {allowed: false, reason: "forbidden: …"}, …}}
 *
 * Each action is the SelfSubjectAccessReviews of the calls it makes (src/operations), asked with
 * the caller's token and cached like every review (auth.ts). In --auth-mode=server every action
 * is allowed in a served namespace: the server's account acts for everyone.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { PLURAL } from '../../api/index.js';
import type { Access, Authenticator } from '../auth.js';

const WORKFLOWS = PLURAL.workflow;
const on = (verb: string, resource: string, purpose: string, extra: Partial<Access> = {}): Access => ({
  verb,
  resource,
  purpose,
  ...extra,
});

/** Every action of the UI and the reviews it needs (all must allow). */
export const ACTION_ACCESS: Record<string, Access[]> = {
  submit: [on('create', WORKFLOWS, 'so it may not submit workflows there')],
  resubmit: [
    on('get', WORKFLOWS, 'so it may not resubmit workflows there'),
    on('create', WORKFLOWS, 'so it may not resubmit workflows there'),
  ],
  stop: [on('patch', WORKFLOWS, 'so it may not stop workflows there')],
  terminate: [on('patch', WORKFLOWS, 'so it may not terminate workflows there')],
  suspend: [on('patch', WORKFLOWS, 'so it may not suspend workflows there')],
  resume: [
    on('patch', WORKFLOWS, 'so it may not resume workflows there'),
    on('update', WORKFLOWS, 'so it may not resume workflows there', { subresource: 'status' }),
  ],
  // src/operations/retry.ts: reads and patches the workflow, deletes the retried nodes' pods and
  // reads them until they are gone, then writes the status.
  retry: [
    on('patch', WORKFLOWS, 'so it may not retry workflows there'),
    on('update', WORKFLOWS, 'so it may not retry workflows there', { subresource: 'status' }),
    on('delete', 'pods', "so it may not retry workflows there (a retry deletes the failed steps' pods)", { group: '' }),
    on('get', 'pods', "so it may not retry workflows there (a retry waits for the failed steps' pods to go)", { group: '' }),
  ],
  // src/operations/cron-workflows.ts: suspend and resume are one merge patch of the spec.
  cronSuspend: [on('patch', PLURAL.cronWorkflow, 'so it may not suspend cron workflows there')],
  cronResume: [on('patch', PLURAL.cronWorkflow, 'so it may not resume cron workflows there')],
  // src/operations/templates.ts and cron-workflows.ts `update`: one replace of the object.
  templateUpdate: [on('update', PLURAL.workflowTemplate, 'so it may not edit workflow templates there')],
  cronUpdate: [on('update', PLURAL.cronWorkflow, 'so it may not edit cron workflows there')],
  // src/operations/cron-workflows.ts `backfill`: reads the CronWorkflow, adds to spec.backfills in one merge patch.
  cronBackfill: [on('patch', PLURAL.cronWorkflow, 'so it may not backfill cron workflows there')],
  delete: [on('delete', WORKFLOWS, 'so it may not delete workflows there')],
  logs: [on('get', 'pods', 'so it may not read the logs of pods there', { group: '', subresource: 'log' })],
};

export function accessRoutes(app: FastifyInstance, auth: Authenticator): void {
  app.get('/api/v1/access/:namespace', async (req: FastifyRequest<{ Params: { namespace: string } }>) => {
    const { namespace } = req.params;
    const entries = await Promise.all(
      Object.entries(ACTION_ACCESS).map(async ([action, needs]) => {
        for (const need of needs) {
          const refusal = await auth.access(req.caller, namespace, need);
          if (refusal) return [action, { allowed: false, reason: refusal.message }] as const;
        }
        return [action, { allowed: true }] as const;
      }),
    );
    return { namespace, actions: Object.fromEntries(entries) };
  });
}
