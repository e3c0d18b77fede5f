/**
 * The shapes the UI reads from the server: the records of src/api, imported as types only (the
 * bundle carries none of src/api's code), so the UI and the server cannot disagree on a field.
 * What the UI needs narrower than the record (a listed object always has a name and namespace)
 * is narrowed here.
 */
import type {
  Artifact as ApiArtifact,
  NodePhase,
  NodeStatus as ApiNodeStatus,
  ObjectMeta,
  Parameter as ApiParameter,
  Inputs,
  Outputs,
  WorkflowSpec,
  WorkflowStatus as ApiWorkflowStatus,
} from '../../src/api/index.js';
/** An archived workflow as the archive's list gives it (src/archive). */
export type { ArchivedSummary, ArchivePage } from '../../src/archive/archive-store.js';

export type Phase = '' | NodePhase;

/**
 * A parameter value as text: the record keeps what the author wrote (`value: 3` is a number on
 * the wire, as in the peer), the UI shows and edits text.
 */
export function valueText(v: string | number | boolean | undefined): string {
  return v === undefined ? '' : String(v);
}

/** An object as the server lists it: it always has a name and a namespace. */
export type Meta = ObjectMeta & { name: string; namespace: string };

export type Parameter = ApiParameter;
export type Artifact = ApiArtifact;
export type IO = Inputs & Outputs;
export type NodeStatus = ApiNodeStatus;

export interface Workflow {
  metadata: Meta;
  spec?: WorkflowSpec;
  status?: ApiWorkflowStatus;
}

export interface List<T> {
  metadata?: { resourceVersion?: string; continue?: string };
  items: T[];
}

export interface Template {
  metadata: Meta;
  spec?: WorkflowSpec;
}

export interface Access {
  allowed: boolean;
  reason?: string;
}
