/**
 * What the workflow page's summary shows: the arguments it was given (name = value), its labels
 * and annotations, and who submitted it. The REST server records the submitting user as the
 * annotation `workflows.plugflow.io/creator` (src/operations/creator.ts); a workflow made by the
 * peer carries `workflows.argoproj.io/creator` as a label (and the user's e-mail and name beside
 * it). Pure: tested beside.
 */
import { valueText, type Parameter, type Workflow } from './types.js';

export const CREATOR = 'workflows.plugflow.io/creator';
const PEER_CREATOR = 'workflows.argoproj.io/creator';
const PEER_CREATOR_NAME = 'workflows.argoproj.io/creator-preferred-username';

export interface Summary {
  parameters: [name: string, value: string][];
  labels: [string, string][];
  annotations: [string, string][];
  /** Who submitted it, when recorded. */
  creator?: string;
  /** The template it was submitted from. */
  template?: string;
}

const sorted = (m: Record<string, string> | undefined): [string, string][] =>
  Object.entries(m ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

/** A parameter's value as given; one taken from elsewhere says from where. */
function valueOf(p: Pick<Parameter, 'value' | 'valueFrom'>): string {
  if (p.value !== undefined) return valueText(p.value);
  if (p.valueFrom) return `(from ${Object.keys(p.valueFrom).join(', ')})`;
  return '';
}

export function summaryOf(wf: Workflow): Summary {
  const md = wf.metadata;
  const labels = md.labels ?? {};
  const annotations = md.annotations ?? {};
  const creator = annotations[CREATOR] ?? labels[PEER_CREATOR_NAME] ?? labels[PEER_CREATOR] ?? annotations[PEER_CREATOR];
  const ref = wf.spec?.workflowTemplateRef;
  return {
    parameters: (wf.spec?.arguments?.parameters ?? []).map((p) => [p.name, valueOf(p)]),
    labels: sorted(labels),
    annotations: sorted(annotations),
    ...(creator ? { creator } : {}),
    ...(ref ? { template: `${ref.clusterScope ? 'ClusterWorkflowTemplate' : 'WorkflowTemplate'} ${ref.name}` } : {}),
  };
}
