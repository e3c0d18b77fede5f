/**
 * `spec.workflowMetadata`: labels and annotations the workflow gives itself when it runs, and
 * `labelsFrom` — labels whose values are expressions (src/expr, the same language as `{{=…}}`)
 * over the workflow's variables (`workflow.name`, `workflow.parameters.<name>`, …), as the peer
 * does. The result of an expression is turned into text; it must be a valid label value, or the
 * workflow fails at once naming the label (the API server would refuse the write forever).
 *
 * Asked for (`setWorkflowMetadata`) while the workflow runs and its metadata still lacks one of
 * the values, so a crash between the status write and the patch loses nothing.
 */
import type { Workflow, WorkflowSpec } from '../api/index.js';
import type { EngineAction } from './contract.js';
import { valueSource } from './expressions.js';
import type { Vars } from './variables.js';

const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

export type MetadataDecision = { action?: Extract<EngineAction, { kind: 'setWorkflowMetadata' }> } | { error: string };

export function workflowMetadataAction(workflow: Workflow, spec: WorkflowSpec, vars: Vars): MetadataDecision {
  const md = spec.workflowMetadata;
  if (!md) return {};
  const labels: Record<string, string> = { ...md.labels };
  const annotations: Record<string, string> = { ...md.annotations };
  const source = valueSource(vars);
  for (const [name, from] of Object.entries(md.labelsFrom ?? {})) {
    const field = `spec.workflowMetadata.labelsFrom.${name}.expression`;
    if (!from?.expression) return { error: `${field} is required` };
    let value: string;
    try {
      value = source.evaluate(from.expression, field);
    } catch (err) {
      return { error: (err as Error).message };
    }
    if (value.length > 63 || !LABEL_VALUE.test(value))
      return {
        error: `${field} gave ${JSON.stringify(value)}, which is not a valid label value (at most 63 letters, digits, '-', '_', '.')`,
      };
    labels[name] = value;
  }
  const have = workflow.metadata ?? {};
  const missing = (want: Record<string, string>, got: Record<string, string> | undefined) =>
    Object.entries(want).some(([k, v]) => got?.[k] !== v);
  if (!missing(labels, have.labels) && !missing(annotations, have.annotations)) return {};
  return { action: { kind: 'setWorkflowMetadata', labels, annotations } };
}

const LABEL_KEY = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;

/** Label names and literal label values the API server would refuse, named by field. */
export function checkWorkflowMetadata(spec: WorkflowSpec, add: (field: string, detail: string) => void): void {
  const md = spec.workflowMetadata;
  if (!md) return;
  for (const [k, v] of Object.entries(md.labels ?? {})) {
    if (!LABEL_KEY.test(k)) add(`spec.workflowMetadata.labels.${k}`, 'is not a valid label name');
    else if (typeof v !== 'string' || v.length > 63 || !LABEL_VALUE.test(v))
      add(`spec.workflowMetadata.labels.${k}`, `has ${JSON.stringify(v)}, which is not a valid label value`);
  }
  for (const k of Object.keys(md.annotations ?? {}))
    if (!LABEL_KEY.test(k)) add(`spec.workflowMetadata.annotations.${k}`, 'is not a valid annotation name');
  for (const k of Object.keys(md.labelsFrom ?? {}))
    if (!LABEL_KEY.test(k)) add(`spec.workflowMetadata.labelsFrom.${k}`, 'is not a valid label name');
}
