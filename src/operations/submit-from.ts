/**
 * submit --from: a Workflow made from a WorkflowTemplate, a ClusterWorkflowTemplate or a
 * CronWorkflow, with the submit options of the peer's `POST /api/v1/workflows/{ns}/submit`
 * (`argo submit --from kind/name -p a=b -l x=y --entrypoint e --serviceaccount sa`).
 *
 * From a template the workflow refers to it (`spec.workflowTemplateRef`), so the template's
 * changes reach it the way they reach any workflow that refers to it; from a CronWorkflow it
 * carries what a scheduled run carries (src/cron/run-workflow.ts `workflowOfCron`: workflowSpec,
 * workflowMetadata, the cron's label, the cron as owner) — but is named by the caller (default
 * `<cron>-` generated), so it never takes a scheduled time's name.
 *
 * Pure but for reading the source object, which is done with the caller's client: whoever may
 * not read the template cannot submit from it.
 */
import {
  API_VERSION,
  LABEL_CLUSTER_WORKFLOW_TEMPLATE,
  LABEL_WORKFLOW_TEMPLATE,
  isJsonObject,
  type CronWorkflow,
  type Workflow,
} from '../api/index.js';
import { workflowOfCron } from '../cron/run-workflow.js';
import type { KubeClient } from '../kube/client.js';
import { CLUSTER_WORKFLOW_TEMPLATES, CRON_WORKFLOWS, WORKFLOW_TEMPLATES } from '../kube/resource.js';
import { OperationRefused } from './errors.js';

export type SubmitSourceKind = 'WorkflowTemplate' | 'ClusterWorkflowTemplate' | 'CronWorkflow';

/** Every spelling the peer's CLI and server accept for a source kind (kind, singular, plural, short). */
const KIND_NAMES: Record<string, SubmitSourceKind> = {
  workflowtemplate: 'WorkflowTemplate',
  workflowtemplates: 'WorkflowTemplate',
  wftmpl: 'WorkflowTemplate',
  clusterworkflowtemplate: 'ClusterWorkflowTemplate',
  clusterworkflowtemplates: 'ClusterWorkflowTemplate',
  cwftmpl: 'ClusterWorkflowTemplate',
  cronworkflow: 'CronWorkflow',
  cronworkflows: 'CronWorkflow',
  cronwf: 'CronWorkflow',
  cwf: 'CronWorkflow',
};

/** The submit options this operation takes; any other key is refused, naming it. */
export interface SubmitOptions {
  name?: string;
  generateName?: string;
  entryPoint?: string;
  /** `["name=value", …]` */
  parameters?: string[];
  serviceAccount?: string;
  /** `"a=b,c=d"` */
  labels?: string;
  /** `"a=b,c=d"` */
  annotations?: string;
  /** Build the workflow, create nothing. */
  dryRun?: boolean;
  /** Ask the API server to check the create without storing it. */
  serverDryRun?: boolean;
  podPriorityClassName?: string;
  priority?: number;
  ownerReference?: { apiVersion: string; kind: string; name: string; uid: string; controller?: boolean; blockOwnerDeletion?: boolean };
}

const OPTION_KEYS = new Set([
  'name',
  'generateName',
  'entryPoint',
  'parameters',
  'serviceAccount',
  'labels',
  'annotations',
  'dryRun',
  'serverDryRun',
  'podPriorityClassName',
  'priority',
  'ownerReference',
]);

export function parseSourceKind(kind: unknown): SubmitSourceKind {
  const k = typeof kind === 'string' ? KIND_NAMES[kind.toLowerCase()] : undefined;
  if (!k)
    throw new OperationRefused(
      'invalid',
      `resourceKind ${JSON.stringify(kind)} cannot be submitted: use WorkflowTemplate (wftmpl), ClusterWorkflowTemplate (cwftmpl) or CronWorkflow (cronwf)`,
    );
  return k;
}

/** The options as given (the request's `submitOptions`), checked field by field. */
export function parseSubmitOptions(given: unknown): SubmitOptions {
  if (given === undefined || given === null) return {};
  if (!isJsonObject(given)) throw new OperationRefused('invalid', 'submitOptions must be an object');
  for (const key of Object.keys(given))
    if (!OPTION_KEYS.has(key)) throw new OperationRefused('invalid', `submitOptions.${key} is not supported by plugflow's submit`);
  const str = (k: string) => {
    const v = given[k];
    if (v !== undefined && v !== null && typeof v !== 'string')
      throw new OperationRefused('invalid', `submitOptions.${k} must be a string`);
    return v === null || v === '' ? undefined : v;
  };
  const bool = (k: string) => {
    const v = given[k];
    if (v !== undefined && v !== null && typeof v !== 'boolean')
      throw new OperationRefused('invalid', `submitOptions.${k} must be true or false`);
    return v === true;
  };
  const params = given.parameters;
  if (params !== undefined && params !== null && (!Array.isArray(params) || params.some((p) => typeof p !== 'string')))
    throw new OperationRefused('invalid', 'submitOptions.parameters must be a list of "name=value" strings');
  const priority = given.priority;
  if (priority !== undefined && priority !== null && !Number.isInteger(priority))
    throw new OperationRefused('invalid', 'submitOptions.priority must be a whole number');
  const owner = given.ownerReference;
  if (owner !== undefined && owner !== null) {
    if (!isJsonObject(owner) || ['apiVersion', 'kind', 'name', 'uid'].some((k) => typeof owner[k] !== 'string' || owner[k] === ''))
      throw new OperationRefused('invalid', 'submitOptions.ownerReference needs apiVersion, kind, name and uid');
  }
  const out: SubmitOptions = {};
  for (const k of ['name', 'generateName', 'entryPoint', 'serviceAccount', 'labels', 'annotations', 'podPriorityClassName'] as const) {
    const v = str(k);
    if (v !== undefined) out[k] = v;
  }
  if (Array.isArray(params) && params.length > 0) out.parameters = params as string[];
  if (bool('dryRun')) out.dryRun = true;
  if (bool('serverDryRun')) out.serverDryRun = true;
  if (typeof priority === 'number') out.priority = priority;
  if (owner) out.ownerReference = owner as SubmitOptions['ownerReference'];
  return out;
}

/** `"a=b,c=d"` → {a: "b", c: "d"}, the field named in the error. */
function keyValues(text: string, field: string): Record<string, string> {
  const out: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const part of text.split(',')) {
    if (part.trim() === '') continue;
    const eq = part.indexOf('=');
    if (eq <= 0) throw new OperationRefused('invalid', `submitOptions.${field}: ${JSON.stringify(part)} is not key=value`);
    out[part.slice(0, eq).trim()] = part.slice(eq + 1).trim();
  }
  return out;
}

/** `["a=b"]` → [{name: "a", value: "b"}], the index named in the error. */
function parameterPairs(list: string[]): { name: string; value: string }[] {
  return list.map((p, i) => {
    const eq = p.indexOf('=');
    if (eq <= 0) throw new OperationRefused('invalid', `submitOptions.parameters[${i}] must be "name=value", got ${JSON.stringify(p)}`);
    return { name: p.slice(0, eq), value: p.slice(eq + 1) };
  });
}

/** The options applied to a workflow (a copy): name, entrypoint, parameters, labels, … */
export function applySubmitOptions(wf: Workflow, o: SubmitOptions): Workflow {
  const out = structuredClone(wf);
  if (o.name) {
    out.metadata.name = o.name;
    delete out.metadata.generateName;
  } else if (o.generateName) out.metadata.generateName = o.generateName;
  if (o.labels) out.metadata.labels = { ...(out.metadata.labels ?? {}), ...keyValues(o.labels, 'labels') };
  if (o.annotations) out.metadata.annotations = { ...(out.metadata.annotations ?? {}), ...keyValues(o.annotations, 'annotations') };
  if (o.ownerReference) out.metadata.ownerReferences = [...(out.metadata.ownerReferences ?? []), o.ownerReference];
  if (o.entryPoint) out.spec.entrypoint = o.entryPoint;
  if (o.serviceAccount) out.spec.serviceAccountName = o.serviceAccount;
  if (o.podPriorityClassName) out.spec.podPriorityClassName = o.podPriorityClassName;
  if (o.priority !== undefined) out.spec.priority = o.priority;
  if (o.parameters) {
    const given = parameterPairs(o.parameters);
    const params = [...(out.spec.arguments?.parameters ?? [])];
    for (const p of given) {
      const at = params.findIndex((q) => q.name === p.name);
      if (at >= 0) params[at] = { ...params[at]!, value: p.value };
      else params.push(p);
    }
    out.spec.arguments = { ...(out.spec.arguments ?? {}), parameters: params };
  }
  return out;
}

/** The workflow `kind/name` submits in `namespace`, before the options. Reads the source as `kube`. */
export async function workflowFromSource(kube: KubeClient, namespace: string, kind: SubmitSourceKind, name: string): Promise<Workflow> {
  if (!name) throw new OperationRefused('invalid', 'resourceName is required: the name of the template or CronWorkflow to submit');
  if (kind === 'CronWorkflow') {
    // As a scheduled run is made (src/cron/decide.ts), but named by the caller, never by a time.
    const wf = workflowOfCron(await kube.get<CronWorkflow>(CRON_WORKFLOWS, namespace, name));
    wf.metadata.generateName = `${name}-`;
    return wf;
  }
  const cluster = kind === 'ClusterWorkflowTemplate';
  // Read first: a template that is not there (or not readable) is the caller's 404/403, not a
  // workflow that fails later.
  await kube.get(cluster ? CLUSTER_WORKFLOW_TEMPLATES : WORKFLOW_TEMPLATES, cluster ? undefined : namespace, name);
  return {
    apiVersion: API_VERSION,
    kind: 'Workflow',
    metadata: {
      generateName: `${name}-`,
      namespace,
      labels: { [cluster ? LABEL_CLUSTER_WORKFLOW_TEMPLATE : LABEL_WORKFLOW_TEMPLATE]: name },
    },
    spec: { workflowTemplateRef: cluster ? { name, clusterScope: true } : { name } },
  } as Workflow;
}
