/**
 * Runs one resource template: its action on its object, with the rights of the client it is
 * given (the controller passes a view that impersonates the workflow's service account), then
 * waits for its success or failure condition and reads its outputs.
 *
 * Steps, each with the peer's meaning (the engine README lists where plugflow differs):
 *   - get: read the object (manifest, or `flags: [TYPE, NAME]`);
 *   - create: POST the manifest (`generateName` works); `setOwnerReference` makes the workflow
 *     its owner, so deleting the workflow deletes it;
 *   - apply: server-side apply as field manager `plugflow`, taking over conflicting fields (what
 *     `kubectl apply` does to fields it last applied);
 *   - replace: PUT the manifest over the object (its current resourceVersion unless given);
 *   - patch: the manifest is the patch — `mergeStrategy` strategic (default), merge or json —
 *     of the object the manifest names, or of `flags: [TYPE, NAME]` (json patches need flags);
 *   - delete: the manifest's object or the objects `flags` name (names, `-l`, `--all`); missing
 *     objects are fine; waits until they are gone unless `--wait=false`.
 * Then, except for delete: the conditions are checked on the object as it changes (a read every
 * 1 s at first, every 5 s after), the failure condition first; the outputs are read from the
 * object once the success condition holds; `outputs.result` is the object's kubectl name
 * (`job.batch/pi-x7k2p`), and output parameters declared as `resourceName`, `resourceKind` or
 * `resourceNamespace` without a source get the object's.
 */
import type { Outputs, Parameter, ResourceObjectRef, Template } from '../api/index.js';
import { FieldError } from '../api/index.js';
import type { KubeClient } from '../kube/client.js';
import type { Discovery } from '../kube/discovery.js';
import { backoffDelay, sleep } from '../kube/backoff.js';
import { ApiError, isNotFound, isTransient } from '../kube/errors.js';
import { MERGE_PATCH } from '../kube/client.js';
import type { ResourceType } from '../kube/resource.js';
import { errorMessage } from '../log/error-message.js';
import { readYamlDocument } from '../yaml/kube-yaml.js';
import { allHold, firstHolding, parseCondition, requirementText, type Requirement } from '../engine/index.js';
import { parseFlags, type ResourceFlags } from '../engine/index.js';
import { runJqFilter } from './jq-filter.js';
import { parseJsonPath } from '../engine/index.js';

export interface OwnerWorkflow {
  apiVersion: string;
  kind: string;
  name: string;
  namespace: string;
  uid: string;
}

export interface ResourceRunInput {
  /** Acts with this client's rights (an impersonating view). */
  client: KubeClient;
  discovery: Discovery;
  workflow: OwnerWorkflow;
  /** The rendered template (its `resource` section and `outputs`). */
  template: Template;
  /** `spec.templates[…]`-style name of the template, for messages. */
  where: string;
  /** The object the action already acted on (a restarted controller): only wait and read outputs. */
  resume?: ResourceObjectRef;
  signal: AbortSignal;
  /** Called once the action is done, with the object it acted on (not for delete). */
  onActed?: (ref: ResourceObjectRef, message: string) => void;
  /** Poll interval bounds (tests shorten them). */
  pollMs?: { first: number; max: number };
}

export type ResourceResult =
  | { phase: 'Succeeded'; message: string; outputs: Outputs; ref?: ResourceObjectRef }
  | { phase: 'Failed' | 'Error'; message: string; ref?: ResourceObjectRef };

const STRATEGIC_PATCH = 'application/strategic-merge-patch+json';
const JSON_PATCH = 'application/json-patch+json';
const FIELD_MANAGER = 'plugflow';

/** A problem of the user's template or object: the node fails with it. */
class ResourceFailure extends Error {}

type Obj = Record<string, unknown> & { apiVersion?: string; kind?: string; metadata?: Record<string, unknown> };

export async function runResourceTemplate(input: ResourceRunInput): Promise<ResourceResult> {
  const r = input.template.resource!;
  const field = `${input.where}.resource`;
  let ref: ResourceObjectRef | undefined = input.resume;
  try {
    const success = parseCondition(r.successCondition ?? '', `${field}.successCondition`);
    const failure = parseCondition(r.failureCondition ?? '', `${field}.failureCondition`);
    let object: Obj | undefined;
    if (!ref) {
      const flags = parseFlags(r.flags ?? [], r.action, `${field}.flags`);
      const acted = await act(input, flags, field);
      if (acted === 'deleted') return { phase: 'Succeeded', message: 'deleted', outputs: {} };
      object = acted;
      ref = refOf(object, field);
      input.onActed?.(ref, `${r.action}: ${kubectlName(ref)}`);
    }
    const type = await servedType(input.discovery, ref.apiVersion, ref.kind);
    if (success.length > 0 || failure.length > 0) {
      const waited = await waitFor(input, type, ref, success, failure);
      if (waited.failed !== undefined) return { phase: 'Failed', message: waited.failed, ref };
      object = waited.object;
    } else {
      object ??= await retrying(input.signal, () => input.client.get<Obj>(type, ref!.namespace, ref!.name));
    }
    const outputs = await readOutputs(input.template.outputs?.parameters ?? [], object, `${input.where}.outputs.parameters`);
    outputs.result = kubectlName(ref);
    // The object itself, for output parameters declared by these names without a valueFrom.
    const named = new Set((outputs.parameters ?? []).map((p) => p.name));
    const about: Parameter[] = [
      { name: 'resourceName', value: ref.name },
      { name: 'resourceKind', value: ref.kind },
      ...(ref.namespace ? [{ name: 'resourceNamespace', value: ref.namespace }] : []),
    ];
    outputs.parameters = [...(outputs.parameters ?? []), ...about.filter((p) => !named.has(p.name))];
    return { phase: 'Succeeded', message: '', outputs, ref };
  } catch (err) {
    if (input.signal.aborted) return { phase: 'Error', message: 'stopped', ...(ref ? { ref } : {}) };
    const transient = err instanceof ApiError && isTransient(err);
    const message = err instanceof ApiError ? `${err.message}` : errorMessage(err);
    return { phase: transient ? 'Error' : 'Failed', message, ...(ref ? { ref } : {}) };
  }
}

/** The kubectl name of an object: `configmap/x`, `job.batch/x`, `workflow.argoproj.io/x`. */
export function kubectlName(ref: ResourceObjectRef): string {
  const slash = ref.apiVersion.indexOf('/');
  const group = slash < 0 ? '' : ref.apiVersion.slice(0, slash);
  return `${ref.kind.toLowerCase()}${group ? `.${group}` : ''}/${ref.name}`;
}

async function act(input: ResourceRunInput, flags: ResourceFlags, field: string): Promise<Obj | 'deleted'> {
  const r = input.template.resource!;
  const { client, discovery, signal } = input;
  // The engine's manifest pod fetched it and the runner put it into `manifest` (fetched-manifest.ts).
  if (r.manifestFrom) throw new FieldError(`${field}.manifestFrom`, 'the manifest was not fetched: no pod reported it');
  const manifest = readManifest(r.manifest, r.action, r.mergeStrategy, field);
  const write = { ...(flags.dryRun ? { dryRun: true } : {}), ...(flags.fieldValidation ? { fieldValidation: flags.fieldValidation } : {}) };
  const target = async (): Promise<{ type: ResourceType; namespace?: string; names: string[] }> => {
    if (flags.targets) {
      const type = await discovery.resourceByName(flags.targets.type);
      return { type, namespace: namespaceFor(type, flags.namespace, input), names: flags.targets.names };
    }
    if (!manifest || Array.isArray(manifest))
      throw new FieldError(`${field}.flags`, 'must name the object (TYPE NAME) when the manifest does not');
    const type = await typeOf(discovery, manifest, field);
    const name = nameOf(manifest);
    if (!name) throw new FieldError(`${field}.manifest`, `needs metadata.name for action ${r.action}`);
    return { type, namespace: namespaceFor(type, flags.namespace ?? metaString(manifest, 'namespace'), input), names: [name] };
  };
  switch (r.action) {
    case 'create':
    case 'apply':
    case 'replace': {
      const body = owned(requireObject(manifest, r.action, field), r.setOwnerReference === true, input, field);
      const type = await typeOf(discovery, body, field);
      const namespace = namespaceFor(type, flags.namespace ?? metaString(body, 'namespace'), input);
      if (namespace !== undefined) (body.metadata ??= {}).namespace = namespace;
      if (r.action === 'create') return retrying(signal, () => client.create<Obj>(type, namespace, body, write));
      const name = nameOf(body);
      if (!name) throw new FieldError(`${field}.manifest`, `needs metadata.name for action ${r.action} (generateName is for create)`);
      if (r.action === 'apply') {
        return retrying(signal, () =>
          client.apply<Obj>(type, namespace, name, body, { fieldManager: FIELD_MANAGER, force: true, ...write }),
        );
      }
      return retrying(signal, async () => {
        const given = body.metadata?.resourceVersion;
        const current = given ? undefined : await client.get<Obj>(type, namespace, name);
        const rv = given ?? current?.metadata?.resourceVersion;
        return client.replace<Obj>(
          type,
          namespace,
          name,
          { ...body, metadata: { ...body.metadata, resourceVersion: rv } },
          undefined,
          write,
        );
      });
    }
    case 'get': {
      const t = await target();
      if (t.names.length !== 1) throw new FieldError(`${field}.flags`, 'action get needs exactly one object: TYPE NAME');
      return retrying(signal, () => client.get<Obj>(t.type, t.namespace, t.names[0]!));
    }
    case 'patch': {
      const strategy = r.mergeStrategy ?? 'strategic';
      if (manifest === undefined) throw new FieldError(`${field}.manifest`, 'holds the patch and is required for action patch');
      const t = strategy === 'json' && !flags.targets ? undefined : await target();
      if (!t) throw new FieldError(`${field}.flags`, 'must name the object (TYPE NAME) of a json patch');
      if (t.names.length !== 1) throw new FieldError(`${field}.flags`, 'action patch needs exactly one object: TYPE NAME');
      const contentType = strategy === 'json' ? JSON_PATCH : strategy === 'merge' ? MERGE_PATCH : STRATEGIC_PATCH;
      return retrying(signal, () => client.patch<Obj>(t.type, t.namespace, t.names[0]!, manifest, contentType, write));
    }
    case 'delete': {
      const t =
        flags.targets &&
        (flags.selector !== undefined || flags.fieldSelector !== undefined || flags.all) &&
        flags.targets.names.length === 0
          ? await selectTargets(input, flags, field)
          : await target();
      if (t.names.length === 0 && !flags.targets) throw new FieldError(`${field}.flags`, 'name the objects to delete');
      for (const name of t.names) {
        await retrying(signal, async () => {
          try {
            await client.delete(t.type, t.namespace, name, {
              propagationPolicy: flags.cascade,
              ...(flags.gracePeriodSeconds !== undefined ? { gracePeriodSeconds: flags.gracePeriodSeconds } : {}),
            });
          } catch (err) {
            if (!isNotFound(err)) throw err;
          }
        });
      }
      if (flags.wait) for (const name of t.names) await waitGone(input, t.type, t.namespace, name);
      return 'deleted';
    }
  }
}

async function selectTargets(
  input: ResourceRunInput,
  flags: ResourceFlags,
  field: string,
): Promise<{ type: ResourceType; namespace?: string; names: string[] }> {
  const type = await input.discovery.resourceByName(flags.targets!.type);
  const namespace = namespaceFor(type, flags.namespace, input);
  if (!flags.all && !flags.selector && !flags.fieldSelector)
    throw new FieldError(`${field}.flags`, 'name the objects, or give -l or --all');
  const list = await retrying(input.signal, () =>
    input.client.list<Obj>(type, {
      ...(namespace ? { namespace } : {}),
      ...(flags.selector ? { labelSelector: flags.selector } : {}),
      ...(flags.fieldSelector ? { fieldSelector: flags.fieldSelector } : {}),
    }),
  );
  return { type, namespace, names: list.items.map((o) => nameOf(o)).filter((n): n is string => !!n) };
}

function readManifest(text: string | undefined, action: string, strategy: string | undefined, field: string): Obj | unknown[] | undefined {
  if (text === undefined || text.trim() === '') return undefined;
  let doc: unknown;
  try {
    doc = readYamlDocument(text, `${field}.manifest`, { what: 'one object' });
  } catch (err) {
    throw new ResourceFailure(errorMessage(err));
  }
  if (Array.isArray(doc)) {
    if (action === 'patch' && strategy === 'json') return doc;
    throw new FieldError(`${field}.manifest`, 'is a list; it must be one object (a list is only a json patch)');
  }
  if (doc === null || typeof doc !== 'object') throw new FieldError(`${field}.manifest`, 'must be a YAML or JSON object');
  if (action === 'patch' && strategy === 'json')
    throw new FieldError(`${field}.manifest`, 'must be a list of JSON patch operations for mergeStrategy json');
  return JSON.parse(JSON.stringify(doc)) as Obj;
}

function requireObject(manifest: Obj | unknown[] | undefined, action: string, field: string): Obj {
  if (!manifest || Array.isArray(manifest)) throw new FieldError(`${field}.manifest`, `is required for action ${action}`);
  return manifest;
}

function owned(body: Obj, set: boolean, input: ResourceRunInput, field: string): Obj {
  if (!set) return body;
  const ns = metaString(body, 'namespace');
  if (ns !== undefined && ns !== input.workflow.namespace) {
    throw new FieldError(
      `${field}.setOwnerReference`,
      `cannot make workflow ${input.workflow.namespace}/${input.workflow.name} the owner of an object in namespace ${ns}`,
    );
  }
  const w = input.workflow;
  const refs = Array.isArray(body.metadata?.ownerReferences) ? (body.metadata!.ownerReferences as unknown[]) : [];
  return {
    ...body,
    metadata: { ...body.metadata, ownerReferences: [...refs, { apiVersion: w.apiVersion, kind: w.kind, name: w.name, uid: w.uid }] },
  };
}

async function typeOf(discovery: Discovery, o: Obj, field: string): Promise<ResourceType> {
  if (typeof o.apiVersion !== 'string' || !o.apiVersion || typeof o.kind !== 'string' || !o.kind) {
    throw new FieldError(`${field}.manifest`, 'needs apiVersion and kind');
  }
  return servedType(discovery, o.apiVersion, o.kind);
}

/**
 * The resource type serving `kind` in `apiVersion`. When the API server does not serve the
 * group version at all its discovery answers a bare "404 page not found"; this says instead
 * which group, version and kind are missing and that a CustomResourceDefinition may be.
 */
async function servedType(discovery: Discovery, apiVersion: string, kind: string): Promise<ResourceType> {
  try {
    return await discovery.resourceFor(apiVersion, kind);
  } catch (err) {
    if (!isNotFound(err)) throw err;
    const slash = apiVersion.indexOf('/');
    const group = slash < 0 ? '' : apiVersion.slice(0, slash);
    const version = slash < 0 ? apiVersion : apiVersion.slice(slash + 1);
    throw new ResourceFailure(
      `the API server does not serve ${apiVersion} (group ${JSON.stringify(group)}${group ? '' : ', the core group'}, version ${JSON.stringify(version)}), ` +
        `so it has no kind ${kind}: ${group ? 'the CustomResourceDefinition that defines it may be missing' : 'check the apiVersion'}`,
    );
  }
}

function namespaceFor(type: ResourceType, given: string | undefined, input: ResourceRunInput): string | undefined {
  return type.namespaced ? (given ?? input.workflow.namespace) : undefined;
}

function metaString(o: Obj, key: string): string | undefined {
  const v = o.metadata?.[key];
  return typeof v === 'string' && v !== '' ? v : undefined;
}

function nameOf(o: Obj): string | undefined {
  return metaString(o, 'name');
}

function refOf(o: Obj, field: string): ResourceObjectRef {
  const name = nameOf(o);
  if (!name || typeof o.kind !== 'string' || typeof o.apiVersion !== 'string') {
    throw new FieldError(`${field}`, 'the API server returned an object without apiVersion, kind or name');
  }
  const ns = metaString(o, 'namespace');
  return { apiVersion: o.apiVersion, kind: o.kind, name, ...(ns ? { namespace: ns } : {}) };
}

async function waitFor(
  input: ResourceRunInput,
  type: ResourceType,
  ref: ResourceObjectRef,
  success: Requirement[],
  failure: Requirement[],
): Promise<{ object: Obj; failed?: undefined } | { failed: string }> {
  const poll = input.pollMs ?? { first: 1_000, max: 5_000 };
  let delay = poll.first;
  for (;;) {
    let object: Obj;
    try {
      object = await retrying(input.signal, () => input.client.get<Obj>(type, ref.namespace, ref.name));
    } catch (err) {
      if (isNotFound(err)) throw new ResourceFailure(`${kubectlName(ref)} was deleted while its conditions were being checked`);
      throw err;
    }
    const failed = firstHolding(failure, object);
    if (failed) return { failed: `failure condition "${requirementText(failed)}" holds for ${kubectlName(ref)}` };
    // With only a failure condition, the peer checks it once and succeeds (no success to wait for).
    if (allHold(success, object)) return { object };
    await sleep(delay, input.signal);
    delay = Math.min(poll.max, delay * 2);
  }
}

async function waitGone(input: ResourceRunInput, type: ResourceType, namespace: string | undefined, name: string): Promise<void> {
  const poll = input.pollMs ?? { first: 1_000, max: 5_000 };
  let delay = Math.min(250, poll.first);
  for (;;) {
    try {
      await retrying(input.signal, () => input.client.get(type, namespace, name));
    } catch (err) {
      if (isNotFound(err)) return;
      throw err;
    }
    await sleep(delay, input.signal);
    delay = Math.min(poll.max, delay * 2);
  }
}

async function readOutputs(params: readonly Parameter[], object: Obj, field: string): Promise<Outputs> {
  const out: Parameter[] = [];
  for (const p of params) {
    const vf = p.valueFrom;
    if (vf?.jsonPath !== undefined) {
      out.push({ name: p.name, value: parseJsonPath(vf.jsonPath, `${field}[${p.name}].valueFrom.jsonPath`).evaluate(object) });
    } else if (vf?.jqFilter !== undefined) {
      try {
        out.push({ name: p.name, value: await runJqFilter(object, vf.jqFilter) });
      } catch (err) {
        throw new ResourceFailure(`${field}[${p.name}].valueFrom.jqFilter: ${errorMessage(err)}`);
      }
    }
  }
  return out.length > 0 ? { parameters: out } : {};
}

/** Retries transient API failures (5xx, 429, transport) with backoff for about a minute; others throw at once. */
async function retrying<T>(signal: AbortSignal, call: () => Promise<T>): Promise<T> {
  for (let failures = 0; ;) {
    if (signal.aborted) throw new Error('stopped');
    try {
      return await call();
    } catch (err) {
      if (!(err instanceof ApiError) || !isTransient(err) || ++failures > 8) throw err;
      await sleep(backoffDelay(TRANSIENT_BACKOFF, failures), signal);
    }
  }
}

const TRANSIENT_BACKOFF = { initialMs: 200, maxMs: 10_000, jitter: 0.2 };
