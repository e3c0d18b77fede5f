/**
 * A container's environment as a kubelet computes it, from the pod and the ConfigMaps and
 * Secrets it references (fetched by the caller, so this stays pure):
 *   service variables (KUBERNETES_SERVICE_HOST, ...) < envFrom (in order, later wins)
 *   < env (in order; `value` expands `$(VAR)` from what is defined before it).
 * The result is what `$(VAR)` in command and args may refer to. Variables an image would
 * define (PATH, HOME) are the caller's to add underneath: the kubelet does not know them.
 * A missing non-optional ConfigMap/Secret or key is an error, as the kubelet's
 * CreateContainerConfigError; the runner retries until it is resolved or the pod goes away.
 */
import type { V1ConfigMap, V1Container, V1Pod, V1Secret } from '@kubernetes/client-node';
import { expandVars } from '../pods/expand-vars.js';
import { fieldRefValue, resourceFieldValue, type NodeResources } from './field-ref.js';
import { errorMessage } from '../log/error-message.js';

/** Objects the container references; null means "does not exist". */
export interface EnvSources {
  configMaps: Map<string, V1ConfigMap | null>;
  secrets: Map<string, V1Secret | null>;
}

export class ContainerConfigError extends Error {}

const C_IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Names of the ConfigMaps and Secrets a container's env/envFrom reference. */
export function envReferences(c: V1Container): { configMaps: Set<string>; secrets: Set<string> } {
  const configMaps = new Set<string>();
  const secrets = new Set<string>();
  for (const f of c.envFrom ?? []) {
    if (f.configMapRef?.name) configMaps.add(f.configMapRef.name);
    if (f.secretRef?.name) secrets.add(f.secretRef.name);
  }
  for (const e of c.env ?? []) {
    if (e.valueFrom?.configMapKeyRef?.name) configMaps.add(e.valueFrom.configMapKeyRef.name);
    if (e.valueFrom?.secretKeyRef?.name) secrets.add(e.valueFrom.secretKeyRef.name);
  }
  return { configMaps, secrets };
}

export function resolveEnv(
  pod: V1Pod,
  c: V1Container,
  sources: EnvSources,
  serviceEnv: Record<string, string>,
  node: NodeResources,
): Record<string, string> {
  const ns = pod.metadata?.namespace ?? '';
  const defined: Record<string, string> = { ...serviceEnv };

  for (const f of c.envFrom ?? []) {
    const prefix = f.prefix ?? '';
    if (f.configMapRef) {
      const cm = lookup(sources.configMaps, f.configMapRef.name, 'configmap', ns, f.configMapRef.optional);
      for (const [k, v] of Object.entries(cm?.data ?? {})) if (C_IDENTIFIER.test(prefix + k)) defined[prefix + k] = v;
    }
    if (f.secretRef) {
      const s = lookup(sources.secrets, f.secretRef.name, 'secret', ns, f.secretRef.optional);
      for (const [k, v] of Object.entries(s?.data ?? {})) if (C_IDENTIFIER.test(prefix + k)) defined[prefix + k] = decode(v);
    }
  }

  for (const e of c.env ?? []) {
    const from = e.valueFrom;
    if (!from) {
      defined[e.name] = expandVars(e.value ?? '', defined);
    } else if (from.configMapKeyRef) {
      const ref = from.configMapKeyRef;
      const cm = lookup(sources.configMaps, ref.name, 'configmap', ns, ref.optional);
      const v = cm?.data?.[ref.key];
      if (v !== undefined) defined[e.name] = v;
      else if (cm && !ref.optional) throw new ContainerConfigError(`couldn't find key ${ref.key} in ConfigMap ${ns}/${ref.name}`);
    } else if (from.secretKeyRef) {
      const ref = from.secretKeyRef;
      const s = lookup(sources.secrets, ref.name, 'secret', ns, ref.optional);
      const v = s?.data?.[ref.key];
      if (v !== undefined) defined[e.name] = decode(v);
      else if (s && !ref.optional) throw new ContainerConfigError(`couldn't find key ${ref.key} in Secret ${ns}/${ref.name}`);
    } else if (from.fieldRef) {
      defined[e.name] = wrap(() => fieldRefValue(pod, from.fieldRef!), e.name);
    } else if (from.resourceFieldRef) {
      defined[e.name] = wrap(() => resourceFieldValue(c, from.resourceFieldRef!, node), e.name);
    }
  }
  return defined;
}

function lookup<T>(m: Map<string, T | null>, name: string | undefined, kind: string, ns: string, optional?: boolean): T | undefined {
  const obj = name ? m.get(name) : undefined;
  if (obj) return obj;
  if (optional) return undefined;
  throw new ContainerConfigError(`${kind} "${name ?? ''}" not found in namespace ${ns}`);
}

function wrap(f: () => string, name: string): string {
  try {
    return f();
  } catch (err) {
    throw new ContainerConfigError(`env ${name}: ${errorMessage(err)}`);
  }
}

function decode(b64: string): string {
  return Buffer.from(b64, 'base64').toString('utf8');
}
