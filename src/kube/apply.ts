/**
 * `kubectl apply` for our own tools: parse multi-document YAML and server-side apply each object,
 * so `plugflow dev`, the install test and the test harness install exactly what users install.
 */
import { ApiextensionsV1Api, type KubeConfig, KubernetesObjectApi, PatchStrategy, type KubernetesObject } from '@kubernetes/client-node';
// The typed model converter: KubernetesObjectApi serializes built-in kinds through the typed
// models, which silently drop JSON keys the model spells differently (a CRD schema's
// `x-kubernetes-int-or-string` is `xKubernetesIntOrString` there). Converting plain JSON into the
// model first makes the round trip lossless.
import { ObjectSerializer } from '@kubernetes/client-node/dist/gen/models/ObjectSerializer.js';
import { readFileSync } from 'node:fs';
import { readYamlDocuments } from '../yaml/kube-yaml.js';

export const FIELD_MANAGER = 'plugflow';

/** Parses YAML documents as kubectl does, dropping empty ones; a parse error names the file and line. */
export function parseManifests(text: string, source = '<input>'): KubernetesObject[] {
  const out: KubernetesObject[] = [];
  for (const obj of readYamlDocuments(text, source) as KubernetesObject[]) {
    if (typeof obj !== 'object' || Array.isArray(obj)) throw new Error(`${source}: a document is not an object`);
    if (!obj.apiVersion || !obj.kind) throw new Error(`${source}: a document has no apiVersion/kind`);
    out.push(obj);
  }
  return out;
}

export function readManifests(path: string): KubernetesObject[] {
  return parseManifests(readFileSync(path, 'utf8'), path);
}

/** Server-side applies objects in order (namespaces and CRDs first is the caller's order). */
export async function applyObjects(kc: KubeConfig, objects: KubernetesObject[]): Promise<void> {
  const api = KubernetesObjectApi.makeApiClient(kc);
  for (const obj of objects) {
    try {
      await api.patch(toModel(obj), undefined, undefined, FIELD_MANAGER, true, PatchStrategy.ServerSideApply);
    } catch (err) {
      const ns = obj.metadata?.namespace ? `${obj.metadata.namespace}/` : '';
      throw new Error(`applying ${obj.kind} ${ns}${obj.metadata?.name}: ${describeError(err)}`);
    }
  }
}

/** Plain JSON → the client's typed model for kinds whose JSON keys differ from the model's. */
function toModel(obj: KubernetesObject): KubernetesObject {
  if (obj.kind === 'CustomResourceDefinition' && obj.apiVersion === 'apiextensions.k8s.io/v1') {
    return ObjectSerializer.deserialize(obj, 'V1CustomResourceDefinition', '') as KubernetesObject;
  }
  return obj;
}

/** Waits until the named CRDs report Established (their endpoints are served). */
export async function waitForCrds(kc: KubeConfig, names: string[], timeoutMs = 60_000): Promise<void> {
  const api = kc.makeApiClient(ApiextensionsV1Api);
  const deadline = Date.now() + timeoutMs;
  for (const name of names) {
    for (;;) {
      const crd = await api.readCustomResourceDefinition({ name });
      if (crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')) break;
      if (Date.now() > deadline) throw new Error(`CRD ${name} not established after ${timeoutMs / 1000}s`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/** Applies objects and waits for any CRDs among them to be established. */
export async function applyAndWait(kc: KubeConfig, objects: KubernetesObject[]): Promise<void> {
  await applyObjects(kc, objects);
  const crds = objects.filter((o) => o.kind === 'CustomResourceDefinition').map((o) => o.metadata!.name!);
  await waitForCrds(kc, crds);
}

/** A short message from a client-node ApiException or any other error. */
export function describeError(err: unknown): string {
  const e = err as { code?: number; body?: unknown; message?: string };
  if (e && typeof e.code === 'number' && e.body !== undefined) {
    let body = e.body;
    if (typeof body === 'string') {
      try {
        body = JSON.parse(body);
      } catch {
        /* keep text */
      }
    }
    const msg = typeof body === 'object' && body && 'message' in body ? String((body as { message: unknown }).message) : String(body);
    return `${e.code}: ${msg}`;
  }
  return e?.message ?? String(err);
}
