/**
 * WorkflowTemplates and ClusterWorkflowTemplates: create, list, get, update, delete — for
 * `plugflow template …` / `plugflow cluster-template …` and the REST routes, with the rights of
 * whoever asks. A template is checked for the shape a workflow spec must have before it is
 * stored (the API server keeps inline templates opaque), so a broken one is refused here, naming
 * the field, rather than failing every workflow that uses it later.
 */
import { API_VERSION, type WorkflowSpec } from '../api/index.js';
import type { KubeClient, ObjectList } from '../kube/client.js';
import { CLUSTER_WORKFLOW_TEMPLATES, WORKFLOW_TEMPLATES, type ResourceType } from '../kube/resource.js';
import { workflowShapeProblems } from '../api/index.js';
import { OperationRefused } from './errors.js';

export type TemplateKind = 'WorkflowTemplate' | 'ClusterWorkflowTemplate';

export interface TemplateObject {
  apiVersion?: string;
  kind?: string;
  metadata: { name?: string; generateName?: string; namespace?: string; resourceVersion?: string; [k: string]: unknown };
  spec: WorkflowSpec;
}

const TYPE: Record<TemplateKind, ResourceType> = {
  WorkflowTemplate: WORKFLOW_TEMPLATES,
  ClusterWorkflowTemplate: CLUSTER_WORKFLOW_TEMPLATES,
};

/** `namespace` is ignored for ClusterWorkflowTemplates. */
export class Templates {
  private readonly type: ResourceType;
  private readonly ns: string | undefined;

  constructor(
    private readonly kube: KubeClient,
    readonly kind: TemplateKind,
    namespace: string | undefined,
  ) {
    this.type = TYPE[kind];
    this.ns = kind === 'WorkflowTemplate' ? (namespace ?? 'default') : undefined;
  }

  private subject(name: string | undefined): string {
    return `${this.kind} ${this.ns ? `${this.ns}/` : ''}${name ?? '*'}`;
  }

  /** The object to store: our apiVersion and kind, the namespace of the call, a checked spec. */
  private checked(given: unknown): TemplateObject {
    if (typeof given !== 'object' || given === null || Array.isArray(given))
      throw new OperationRefused('invalid', `a ${this.kind} must be an object`);
    const t = given as Partial<TemplateObject> & { kind?: unknown };
    if (t.kind !== undefined && t.kind !== this.kind)
      throw new OperationRefused('invalid', `expected kind ${this.kind}, got ${String(t.kind)}`);
    const md = typeof t.metadata === 'object' && t.metadata !== null ? t.metadata : undefined;
    if (!md?.name && !md?.generateName) throw new OperationRefused('invalid', `${this.kind}: metadata.name (or generateName) is required`);
    if (this.ns && md.namespace && md.namespace !== this.ns) {
      throw new OperationRefused('invalid', `${this.subject(md.name)}: metadata.namespace "${md.namespace}" differs from "${this.ns}"`);
    }
    if (typeof t.spec !== 'object' || t.spec === null) throw new OperationRefused('invalid', `${this.subject(md.name)}: spec is required`);
    const problems = workflowShapeProblems({ spec: t.spec });
    if (problems.length)
      throw new OperationRefused('invalid', `${this.subject(md.name)} is invalid: ${problems.map((p) => p.message).join('; ')}`);
    const metadata = { ...md, ...(this.ns ? { namespace: this.ns } : {}) };
    if (!this.ns) delete metadata.namespace;
    return { ...(t as TemplateObject), apiVersion: API_VERSION, kind: this.kind, metadata };
  }

  /** The template as it would be stored, or OperationRefused naming each problem; stores nothing. */
  lint(template: unknown): TemplateObject {
    return this.checked(template);
  }

  create(template: unknown): Promise<TemplateObject> {
    return this.kube.create<TemplateObject>(this.type, this.ns, this.checked(template));
  }

  /** Replaces the stored template (its resourceVersion, when given, guards a concurrent change). */
  update(name: string, template: unknown): Promise<TemplateObject> {
    const t = this.checked(template);
    if (t.metadata.name !== name)
      throw new OperationRefused('invalid', `${this.subject(name)}: metadata.name "${t.metadata.name}" differs from the name in the path`);
    return this.kube.replace<TemplateObject>(this.type, this.ns, name, t);
  }

  list(labelSelector?: string): Promise<ObjectList<TemplateObject>> {
    return this.kube.list<TemplateObject>(this.type, { namespace: this.ns, labelSelector });
  }

  get(name: string): Promise<TemplateObject> {
    return this.kube.get<TemplateObject>(this.type, this.ns, name);
  }

  async delete(name: string): Promise<void> {
    await this.kube.delete(this.type, this.ns, name);
  }
}
