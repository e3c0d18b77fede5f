/**
 * The Workflow an event submits, built from a binding's evaluated values (pure).
 *
 * The workflow references its template (`spec.workflowTemplateRef {name, clusterScope}`),
 * passes `spec.arguments.parameters`, and is labelled with the template and binding names.
 *
 * Default name (the binding sets no `submit.metadata.name`): `<template>-<yyyymmddhhmmss>-<6>`
 * — the template name (cut so that the whole stays within 63 characters, the label-value limit
 * the workflow's name must also meet on its pods), the UTC time of submission to the second, and
 * six random characters of [a-z0-9]. Two submissions of the same template in the same second
 * share a name with odds of 1 in 2·10⁹, and when the API server does report a clash on a
 * generated name the dispatcher draws new characters and retries, so a burst never loses a
 * submission. A name the binding chose is used as given: a clash fails that submission (spec).
 */
import { randomInt } from 'node:crypto';
import {
  ANNOTATION_EVENT_DIGEST,
  ANNOTATION_EVENT_ID,
  API_VERSION,
  LABEL_CLUSTER_WORKFLOW_TEMPLATE,
  LABEL_WORKFLOW_EVENT_BINDING,
  LABEL_WORKFLOW_TEMPLATE,
  type Workflow,
} from '../api/index.js';

/** Longest workflow name we generate (a label value holds at most 63 characters). */
export const MAX_GENERATED_NAME = 63;
const SUFFIX_CHARS = 'abcdefghijklmnopqrstuvwxyz0123456789';

export interface Submission {
  binding: { namespace: string; name: string };
  template: { name: string; clusterScope: boolean };
  /** Parameter values, already turned into text. */
  parameters: { name: string; value: string }[];
  /** `submit.metadata.name` evaluated, when the binding sets it. */
  name?: string;
  /** The event's id (the binding's spec.event.id, else a request header; event-id.ts), when it has one. */
  eventId?: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

/** Six random characters of [a-z0-9]. */
export function randomSuffix(): string {
  let s = '';
  for (let i = 0; i < 6; i++) s += SUFFIX_CHARS[randomInt(SUFFIX_CHARS.length)];
  return s;
}

/** `yyyymmddhhmmss` in UTC. */
export function timestamp(now: Date): string {
  return now.toISOString().replace(/[-:T]/g, '').slice(0, 14);
}

/** `<template>-<yyyymmddhhmmss>-<suffix>`, the template part cut to keep within 63 characters. */
export function defaultWorkflowName(templateName: string, now: Date, suffix = randomSuffix()): string {
  const tail = `-${timestamp(now)}-${suffix}`;
  const head = templateName.slice(0, MAX_GENERATED_NAME - tail.length).replace(/[-.]+$/, '');
  return `${head}${tail}`;
}

/**
 * The Workflow to create; `name` is the binding's name or a generated default, `digest` what
 * tells this event's workflow from another that has its name (event-id.ts `eventDigest`).
 */
export function workflowFromSubmission(s: Submission, name: string, digest?: string): Workflow {
  const templateLabel = s.template.clusterScope ? LABEL_CLUSTER_WORKFLOW_TEMPLATE : LABEL_WORKFLOW_TEMPLATE;
  const metadata: Workflow['metadata'] = {
    name,
    namespace: s.binding.namespace,
    // Our labels come last: a binding cannot hide where a workflow came from.
    labels: { ...s.labels, [templateLabel]: s.template.name, [LABEL_WORKFLOW_EVENT_BINDING]: s.binding.name },
  };
  const annotations: Record<string, string> = { ...s.annotations };
  if (s.eventId !== undefined) annotations[ANNOTATION_EVENT_ID] = s.eventId;
  if (digest !== undefined) annotations[ANNOTATION_EVENT_DIGEST] = digest;
  if (Object.keys(annotations).length > 0) metadata.annotations = { ...annotations };
  const spec: Workflow['spec'] = {
    workflowTemplateRef: s.template.clusterScope ? { name: s.template.name, clusterScope: true } : { name: s.template.name },
  };
  if (s.parameters.length > 0) spec.arguments = { parameters: s.parameters.map((p) => ({ name: p.name, value: p.value })) };
  return { apiVersion: API_VERSION, kind: 'Workflow', metadata, spec };
}
