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

/**
 * The one place a command chooses how it reaches the cluster: the plugflow server's REST API when
 * one is given (`--server` or PLUGFLOW_SERVER, with `--token` or PLUGFLOW_TOKEN), else straight
 * to Kubernetes with the kubeconfig (the user's own rights either way).
 */
export type Connection = { kind: 'rest'; server: string; rest: () => RestClient } | { kind: 'kube'; kubeconfig?: string; context?: string };

export function connectionFor(flags: BackendFlags & { context?: string }): Connection {
  const server = flags.server ?? process.env.PLUGFLOW_SERVER;
  if (server) {
    const token = flags.token ?? process.env.PLUGFLOW_TOKEN;
    return {
      kind: 'rest',
      server,
      rest: () => new RestClient({ server, token, insecureSkipTlsVerify: flags.insecureSkipTlsVerify ?? false }),
    };
  }
  return {
    kind: 'kube',
    ...(flags.kubeconfig ? { kubeconfig: flags.kubeconfig } : {}),
    ...(flags.context ? { context: flags.context } : {}),
  };
}

/** The workflow commands' backend on the connection the flags choose. */
export function backendFor(flags: BackendFlags & { context?: string }): WorkflowBackend {
  const c = connectionFor(flags);
  return c.kind === 'rest' ? restBackend(c.server, c.rest()) : kubeBackend(flags);
}

export function restBackend(server: string, c: RestClient): WorkflowBackend {
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
