/**
 * The executor plugin declaration and its RPC records (spec document 000 "ExecutorPlugin" and
 * document 001 "Request and reply").
 */
import type { ObjectMeta } from './container.js';
import type { Outputs } from './parameter.js';
import type { Template } from './template.js';
import type { NodePhase } from './workflow-status.js';
import type { DurationString } from './values/scalars.js';
import type { ExecutorPluginSpec } from './workflow-plugin.js';

export * from './workflow-plugin.js';

/** `plugin.yaml`: not a CRD; `plugflow plugin build` turns it into a labelled ConfigMap. */
export interface ExecutorPlugin {
  apiVersion: string;
  kind: 'ExecutorPlugin';
  metadata: ObjectMeta;
  spec: ExecutorPluginSpec;
}

/** What a plugin answers for one template evaluation. */
export interface NodeResult {
  phase?: NodePhase;
  message?: string;
  outputs?: Outputs;
  /** `done/total`; format not fixed by the spec. */
  progress?: string;
}

/** Body of `POST /api/v1/template.execute`. */
export interface ExecuteTemplateArgs {
  template: Template;
  /** Only the request form of metadata (name, namespace, uid) is sent. */
  workflow: { metadata: ObjectMeta };
}

/** Reply of `template.execute`; `{}` means "not mine, try the next plugin". */
export interface ExecuteTemplateReply {
  node?: NodeResult;
  /** Call again after this long while the node is Pending/Running, e.g. `2m`. */
  requeue?: DurationString;
}
