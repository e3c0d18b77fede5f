/**
 * Where `plugflow submit/list/get/delete` send their calls: to a plugflow server's REST API
 * (`--server URL --token T`), or straight to Kubernetes with the kubeconfig. The commands in
 * rest.ts are written against this interface only, so both paths print the same.
 */
import type { Readable } from 'node:stream';
import type { Workflow } from '../api/index.js';
import { kubeBackend } from './kube-backend.js';
import { RestClient, type ListOptions, type WorkflowList } from './rest-client.js';

export interface WorkflowBackend {
  /** For messages: where the calls go. */
  readonly where: string;
  create(namespace: string, workflow: Workflow, dryRun: boolean): Promise<Workflow>;
  list(namespace: string, options: ListOptions): Promise<WorkflowList>;
  get(namespace: string, name: string): Promise<Workflow>;
  delete(namespace: string, name: string): Promise<void>;
  /** stop, terminate, suspend, resume, retry or resubmit (src/operations; REST: PUT …/{name}/{operation}). */
  operate(namespace: string, name: string, op: WorkflowOperation): Promise<Workflow>;
  /** The stored bytes of one node's output artifact (REST: GET /artifact-files/…). */
  openArtifact(namespace: string, name: string, nodeId: string, artifact: string): Promise<ArtifactStream>;
  close(): Promise<void>;
}

export interface ArtifactStream {
  body: Readable;
  close(): void;
}

/** An operation and its arguments, in the REST API's body form. */
export type WorkflowOperation =
  | { kind: 'stop' | 'terminate' | 'suspend' }
  | { kind: 'resume'; node?: string; parameters?: Record<string, string> }
  | { kind: 'resubmit'; memoized?: boolean; parameters?: Record<string, string> }
  | { kind: 'retry'; restartSuccessful?: boolean; selector?: string };

export interface BackendFlags {
  server?: string;
  token?: string;
  insecureSkipTlsVerify?: boolean;
  kubeconfig?: string;
}

/** The REST backend when a server is given (flag or PLUGFLOW_SERVER), the kubeconfig otherwise. */
export function backendFor(flags: BackendFlags): WorkflowBackend {
  const server = flags.server ?? process.env.PLUGFLOW_SERVER;
  if (server) return restBackend(server, flags.token ?? process.env.PLUGFLOW_TOKEN, flags.insecureSkipTlsVerify ?? false);
  return kubeBackend(flags);
}

export function restBackend(server: string, token: string | undefined, insecureSkipTlsVerify: boolean): WorkflowBackend {
  const c = new RestClient({ server, token, insecureSkipTlsVerify });
  return {
    where: server,
    create: (ns, wf, dryRun) => c.createWorkflow(ns, wf, dryRun),
    list: (ns, o) => c.listWorkflows(ns, o),
    get: (ns, name) => c.getWorkflow(ns, name),
    delete: (ns, name) => c.deleteWorkflow(ns, name),
    operate: (ns, name, op) => c.operate(ns, name, op),
    openArtifact: (ns, name, nodeId, artifact) => c.openArtifact(ns, name, nodeId, artifact),
    close: () => c.close(),
  };
}
