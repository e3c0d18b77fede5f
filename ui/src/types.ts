/** The shapes the UI reads from the server (a subset of src/api's types; the UI is bundled on its own). */

export type Phase = '' | 'Pending' | 'Running' | 'Succeeded' | 'Failed' | 'Error' | 'Skipped' | 'Omitted';

export interface Meta {
  name: string;
  namespace: string;
  uid?: string;
  resourceVersion?: string;
  creationTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export interface Parameter {
  name: string;
  value?: string;
  valueFrom?: Record<string, unknown>;
  default?: string;
  enum?: string[];
  description?: string;
}

export interface Artifact {
  name: string;
  path?: string;
  [k: string]: unknown;
}

export interface IO {
  parameters?: Parameter[];
  artifacts?: Artifact[];
  result?: string;
  exitCode?: string;
}

export interface NodeStatus {
  id: string;
  name: string;
  displayName: string;
  type: string;
  phase: Phase;
  templateName?: string;
  message?: string;
  startedAt?: string;
  finishedAt?: string;
  inputs?: IO;
  outputs?: IO;
  children?: string[];
  boundaryID?: string;
  progress?: string;
  podName?: string;
  retryAttempt?: number;
  hostNodeName?: string;
}

export interface Workflow {
  metadata: Meta;
  spec?: {
    arguments?: { parameters?: Parameter[]; artifacts?: Artifact[] };
    workflowTemplateRef?: { name: string; clusterScope?: boolean };
    [k: string]: unknown;
  };
  status?: {
    phase?: Phase;
    message?: string;
    startedAt?: string;
    finishedAt?: string;
    progress?: string;
    nodes?: Record<string, NodeStatus>;
  };
}

export interface List<T> {
  metadata?: { resourceVersion?: string; continue?: string };
  items: T[];
}

export interface Template {
  metadata: Meta;
  spec?: { entrypoint?: string; arguments?: { parameters?: Parameter[] }; [k: string]: unknown };
}

export interface Access {
  allowed: boolean;
  reason?: string;
}
