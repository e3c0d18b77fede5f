/**
 * CronWorkflows: create, list, get, update, suspend, resume, delete — for `plugflow cron …` and the REST
 * routes, with the rights of whoever asks. A CronWorkflow is checked before it is stored (its
 * schedules parse in its timezone, its workflowSpec passes every check a Workflow's create makes
 * except the lookup of the WorkflowTemplates it refers to, which may come later), so a broken one
 * is refused here, naming the field, instead of failing at every scheduled time.
 */
import {
  API_VERSION,
  CATCH_UP_POLICIES,
  MAX_BACKFILL_PARALLEL,
  MAX_CATCH_UP_RUNS,
  type Backfill,
  type CronWorkflow,
} from '../api/index.js';
import { planBackfill, type BackfillRequest } from '../cron/backfill.js';
import { schedulesOf } from '../cron/decide.js';
import { validateWorkflow } from '../engine/index.js';
import type { KubeClient, ObjectList } from '../kube/client.js';
import { CRON_WORKFLOWS } from '../kube/resource.js';
import { workflowShapeProblems } from '../api/index.js';
import { OperationRefused } from './errors.js';

export class CronWorkflows {
  constructor(
    private readonly kube: KubeClient,
    private readonly ns: string,
  ) {}

  private subject(name: string | undefined): string {
    return `CronWorkflow ${this.ns}/${name ?? '*'}`;
  }

  /** The object to store: our apiVersion and kind, the namespace of the call, a checked spec. */
  checked(given: unknown): CronWorkflow {
    if (typeof given !== 'object' || given === null || Array.isArray(given))
      throw new OperationRefused('invalid', 'a CronWorkflow must be an object');
    const c = given as Partial<CronWorkflow> & { kind?: unknown; metadata?: CronWorkflow['metadata'] & { generateName?: string } };
    if (c.kind !== undefined && c.kind !== 'CronWorkflow')
      throw new OperationRefused('invalid', `expected kind CronWorkflow, got ${String(c.kind)}`);
    const md = typeof c.metadata === 'object' && c.metadata !== null ? c.metadata : undefined;
    if (!md?.name && !md?.generateName) throw new OperationRefused('invalid', 'CronWorkflow: metadata.name (or generateName) is required');
    if (md.namespace && md.namespace !== this.ns)
      throw new OperationRefused('invalid', `${this.subject(md.name)}: metadata.namespace "${md.namespace}" differs from "${this.ns}"`);
    const spec = c.spec;
    if (typeof spec !== 'object' || spec === null || typeof spec.workflowSpec !== 'object' || spec.workflowSpec === null)
      throw new OperationRefused('invalid', `${this.subject(md.name)}: spec.workflowSpec is required`);
    const problems = cronScheduleProblems(c as CronWorkflow);
    for (const p of workflowShapeProblems({ spec: spec.workflowSpec })) problems.push(`spec.workflowSpec: ${p.message}`);
    if (problems.length === 0) {
      const wf = {
        apiVersion: API_VERSION,
        kind: 'Workflow' as const,
        metadata: { name: md.name ?? 'x', namespace: this.ns },
        spec: spec.workflowSpec,
      };
      // Every static error, as a Workflow's create would refuse it; references to (Cluster)WorkflowTemplates
      // are checked when a run starts (without sources validateWorkflow leaves them alone), since
      // a template may be created after the CronWorkflow.
      for (const e of validateWorkflow(wf)) problems.push(`spec.workflowSpec: ${e.message}`);
    }
    if (problems.length) throw new OperationRefused('invalid', `${this.subject(md.name)} is invalid: ${problems.join('; ')}`);
    return { ...(c as CronWorkflow), apiVersion: API_VERSION, kind: 'CronWorkflow', metadata: { ...md, namespace: this.ns } };
  }

  create(cron: unknown): Promise<CronWorkflow> {
    return this.kube.create<CronWorkflow>(CRON_WORKFLOWS, this.ns, this.checked(cron));
  }

  /**
   * Replaces the stored CronWorkflow after the same checks as create; its resourceVersion, when
   * given, guards against a change made meanwhile (409 from the API server).
   */
  update(name: string, cron: unknown): Promise<CronWorkflow> {
    const c = this.checked(cron);
    if (c.metadata.name !== name)
      throw new OperationRefused('invalid', `${this.subject(name)}: metadata.name "${c.metadata.name}" differs from the name in the path`);
    return this.kube.replace<CronWorkflow>(CRON_WORKFLOWS, this.ns, name, c);
  }

  list(labelSelector?: string): Promise<ObjectList<CronWorkflow>> {
    return this.kube.list<CronWorkflow>(CRON_WORKFLOWS, { namespace: this.ns, labelSelector });
  }

  get(name: string): Promise<CronWorkflow> {
    return this.kube.get<CronWorkflow>(CRON_WORKFLOWS, this.ns, name);
  }

  /** No run starts while suspended; on resume only the latest missed time may run (startingDeadlineSeconds). */
  setSuspended(name: string, suspend: boolean): Promise<CronWorkflow> {
    return this.kube.mergePatch<CronWorkflow>(CRON_WORKFLOWS, this.ns, name, { spec: { suspend } });
  }

  /**
   * Asks for the runs of every scheduled time in [from, to] (a new entry of spec.backfills, which
   * the controller starts `parallel` at a time). The same range again answers the first backfill
   * and adds nothing; the write is conditional on the CronWorkflow read (a concurrent change: 409).
   */
  async backfill(name: string, req: BackfillRequest, nowMs = Date.now()): Promise<BackfillAnswer> {
    const cron = await this.get(name);
    const schedules = schedulesOf(cron);
    if (!schedules.ok) throw new OperationRefused('invalid', `${this.subject(name)}: ${schedules.error}`);
    const plan = planBackfill(cron, schedules.schedules, req, nowMs);
    if (!plan.ok) throw new OperationRefused('invalid', `${this.subject(name)}: backfill refused: ${plan.error}`);
    const answer = (message: string): BackfillAnswer => ({
      cronWorkflow: name,
      backfill: plan.entry,
      runs: plan.runs,
      covered: plan.covered,
      existing: plan.existing,
      dropped: plan.drop,
      message,
    });
    if (plan.existing) return answer(`backfill ${plan.entry.name} of this range was asked for before: nothing new starts`);
    const backfills = [...(cron.spec.backfills ?? []).filter((b) => !plan.drop.includes(b.name)), plan.entry];
    const stored = await this.kube.mergePatch<CronWorkflow>(CRON_WORKFLOWS, this.ns, name, {
      metadata: { resourceVersion: cron.metadata.resourceVersion },
      spec: { backfills },
    });
    // An API server with an older CRD prunes the field it does not know: say so, never wait on it.
    if (!(stored.spec.backfills ?? []).some((b) => b.name === plan.entry.name))
      throw new OperationRefused(
        'invalid',
        `${this.subject(name)}: the API server did not keep spec.backfills: its CronWorkflow CRD is older than this plugflow (kubectl apply -f manifests/install.yaml)`,
      );
    const covered = plan.covered ? `; ${plan.covered} more are left to earlier backfills` : '';
    return answer(`backfill ${plan.entry.name}: ${plan.runs} runs start, ${plan.entry.parallel ?? 1} at a time${covered}`);
  }

  async delete(name: string): Promise<void> {
    await this.kube.delete(CRON_WORKFLOWS, this.ns, name);
  }
}

/** What a backfill request answers. */
export interface BackfillAnswer {
  cronWorkflow: string;
  backfill: Backfill;
  /** Runs this backfill starts (0 when the range was asked for before). */
  runs: number;
  /** Times in the range that earlier backfills cover. */
  covered: number;
  existing: boolean;
  /** Complete backfills dropped from the spec to make room. */
  dropped: string[];
  message: string;
}

/** The problems of a CronWorkflow's own fields (schedules in their timezone, concurrencyPolicy), not of its workflowSpec. */
export function cronScheduleProblems(cron: CronWorkflow): string[] {
  const problems: string[] = [];
  const schedules = schedulesOf(cron);
  if (!schedules.ok) problems.push(schedules.error);
  const policy = cron.spec?.concurrencyPolicy;
  if (policy !== undefined && !['Allow', 'Forbid', 'Replace'].includes(policy))
    problems.push(`spec.concurrencyPolicy: ${JSON.stringify(policy)} is not one of Allow, Forbid, Replace`);
  const catchUp = cron.spec?.catchUp;
  if (catchUp !== undefined) {
    if (catchUp.policy !== undefined && !CATCH_UP_POLICIES.includes(catchUp.policy))
      problems.push(`spec.catchUp.policy: ${JSON.stringify(catchUp.policy)} is not one of ${CATCH_UP_POLICIES.join(', ')}`);
    const max = catchUp.maxRuns;
    if (max !== undefined && !(Number.isInteger(max) && max >= 1 && max <= MAX_CATCH_UP_RUNS))
      problems.push(`spec.catchUp.maxRuns: ${String(max)} is not a whole number from 1 to ${MAX_CATCH_UP_RUNS}`);
    if (max !== undefined && catchUp.policy !== 'All') problems.push('spec.catchUp.maxRuns: applies only to policy All');
  }
  const names = new Set<string>();
  (cron.spec?.backfills ?? []).forEach((b, i) => {
    if (names.has(b.name)) problems.push(`spec.backfills[${i}].name: ${JSON.stringify(b.name)} is used twice`);
    names.add(b.name);
    for (const f of ['from', 'to'] as const)
      if (Number.isNaN(Date.parse(b[f] ?? ''))) problems.push(`spec.backfills[${i}].${f}: ${JSON.stringify(b[f])} is not an RFC 3339 time`);
    if (b.parallel !== undefined && !(Number.isInteger(b.parallel) && b.parallel >= 1 && b.parallel <= MAX_BACKFILL_PARALLEL))
      problems.push(`spec.backfills[${i}].parallel: ${String(b.parallel)} is not a whole number from 1 to ${MAX_BACKFILL_PARALLEL}`);
  });
  return problems;
}
