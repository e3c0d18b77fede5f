/**
 * `kubectl apply` for our own tools: parse multi-document YAML and server-side apply each object,
 * so `plugflow dev`, the install test and the test harness install exactly what users install.
 */
import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import { readFileSync } from 'node:fs';
import { readYamlDocuments } from '../yaml/kube-yaml.js';
import { errorMessage } from '../log/error-message.js';
import { KubeClient } from './client.js';
import { Discovery } from './discovery.js';
import { CUSTOM_RESOURCE_DEFINITIONS } from './resource.js';

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

/** Runs `fn` with a client of the kubeconfig's own identity, closed afterwards. */
async function withClient<T>(kc: KubeConfig, fn: (kube: KubeClient) => Promise<T>): Promise<T> {
  const kube = await KubeClient.fromKubeConfig(kc, { userAgent: 'plugflow-apply' });
  try {
    return await fn(kube);
  } finally {
    await kube.close();
  }
}

/**
 * Server-side applies objects in order (namespaces and CRDs first is the caller's order), taking
 * over fields other managers own (kubectl apply --server-side --force-conflicts). A namespaced
 * object without a namespace goes to the kubeconfig context's namespace, else `default`.
 */
export async function applyObjects(kc: KubeConfig, objects: KubernetesObject[]): Promise<void> {
  const fallbackNamespace = kc.getContextObject(kc.getCurrentContext())?.namespace || 'default';
  await withClient(kc, async (kube) => {
    const discovery = new Discovery(kube);
    for (const obj of objects) {
      const ns = obj.metadata?.namespace;
      try {
        const type = await discovery.resourceFor(obj.apiVersion!, obj.kind!);
        const namespace = type.namespaced ? ns || fallbackNamespace : undefined;
        const body = type.namespaced ? { ...obj, metadata: { ...obj.metadata, namespace } } : obj;
        await kube.apply(type, namespace, obj.metadata?.name ?? '', body, { fieldManager: FIELD_MANAGER, force: true });
      } catch (err) {
        throw new Error(`applying ${obj.kind} ${ns ? `${ns}/` : ''}${obj.metadata?.name}: ${errorMessage(err)}`);
      }
    }
  });
}

interface Crd {
  status?: { conditions?: { type: string; status: string }[] };
}

/** Waits until the named CRDs report Established (their endpoints are served). */
export async function waitForCrds(kc: KubeConfig, names: string[], timeoutMs = 60_000): Promise<void> {
  if (names.length === 0) return;
  await withClient(kc, async (kube) => {
    const deadline = Date.now() + timeoutMs;
    for (const name of names) {
      for (;;) {
        const crd = await kube.get<Crd>(CUSTOM_RESOURCE_DEFINITIONS, undefined, name);
        if (crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')) break;
        if (Date.now() > deadline) throw new Error(`CRD ${name} not established after ${timeoutMs / 1000}s`);
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  });
}

/** Applies objects and waits for any CRDs among them to be established. */
export async function applyAndWait(kc: KubeConfig, objects: KubernetesObject[]): Promise<void> {
  await applyObjects(kc, objects);
  const crds = objects.filter((o) => o.kind === 'CustomResourceDefinition').map((o) => o.metadata!.name!);
  await waitForCrds(kc, crds);
}
