/**
 * A pod's volumes as host directories, written the way a kubelet lays them out:
 *   emptyDir, ephemeral          a fresh directory per pod (mode 0777)
 *   configMap, secret            one file per key (or per `items` entry), with its mode
 *   downwardAPI                  one file per item (fieldRef / resourceFieldRef)
 *   projected                    all of its sources in one directory; serviceAccountToken is
 *                                issued by the TokenRequest API for the pod's service account,
 *                                bound to the pod, and refreshed at 80 % of its lifetime
 *   hostPath                     the host path itself
 *   persistentVolumeClaim        a directory per claim under the runner directory, kept
 *                                across pods (the claim must exist; its binding is ignored)
 * Other volume types are reported as unsupported. ConfigMap and Secret contents are written
 * when the pod starts; later edits are not propagated.
 */
import type { V1ConfigMap, V1DownwardAPIVolumeFile, V1KeyToPath, V1Pod, V1Secret, V1Volume } from '@kubernetes/client-node';
import { chmodSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import type { KubeClient } from '../kube/client.js';
import { errorMessage } from '../log/error-message.js';
import { isNotFound } from '../kube/errors.js';
import { CONFIGMAPS, PERSISTENT_VOLUME_CLAIMS, SECRETS } from '../kube/resource.js';
import { requestServiceAccountToken } from '../kube/token-request.js';
import { fieldRefValue, resourceFieldValue, type NodeResources } from './field-ref.js';

export class VolumeError extends Error {}

export interface VolumeDeps {
  client: KubeClient;
  /** Per-pod directory: volumes go to `<podDir>/volumes/<name>`. */
  podDir: string;
  /** Directory of persistent volume claims: `<claimsDir>/<namespace>/<claim>`. */
  claimsDir: string;
  node: NodeResources;
  log: (msg: string, meta?: Record<string, unknown>) => void;
}

const DEFAULT_MODE = 0o644;

export class PodVolumes {
  private readonly timers = new Set<NodeJS.Timeout>();
  private stopped = false;

  constructor(
    private readonly pod: V1Pod,
    private readonly deps: VolumeDeps,
  ) {}

  /** Writes every volume; returns volume name → host path. Throws VolumeError naming the volume. */
  async prepare(): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    // Root only: containers see volumes through their bind mounts (made as root), never by
    // walking the runner directory, so a non-root container cannot reach another container's
    // or pod's volumes (a plugin's token, the agent's service account token) through it.
    makeDir(join(this.deps.podDir, 'volumes'), 0o700);
    for (const v of this.pod.spec?.volumes ?? []) {
      try {
        out.set(v.name, await this.prepareOne(v));
      } catch (err) {
        const msg = err instanceof Error ? err.message : String(err);
        throw new VolumeError(`volume "${v.name}": ${msg}`);
      }
    }
    return out;
  }

  /** Stops token refreshes. */
  stop(): void {
    this.stopped = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }

  private get ns(): string {
    return this.pod.metadata!.namespace!;
  }

  private async prepareOne(v: V1Volume): Promise<string> {
    const dir = join(this.deps.podDir, 'volumes', v.name);
    if (v.emptyDir || v.ephemeral) return makeDir(dir, 0o777);
    if (v.hostPath) {
      if (v.hostPath.type === 'DirectoryOrCreate') mkdirSync(v.hostPath.path, { recursive: true });
      if (v.hostPath.type === 'FileOrCreate') {
        mkdirSync(dirname(v.hostPath.path), { recursive: true });
        writeFileSync(v.hostPath.path, '', { flag: 'a' });
      }
      return v.hostPath.path;
    }
    if (v.persistentVolumeClaim) {
      const claim = v.persistentVolumeClaim.claimName;
      await this.deps.client.get(PERSISTENT_VOLUME_CLAIMS, this.ns, claim).catch((err) => {
        throw isNotFound(err) ? new VolumeError(`persistentvolumeclaim "${claim}" not found`) : err;
      });
      return makeDir(join(this.deps.claimsDir, this.ns, claim), 0o777);
    }
    if (v.configMap) {
      makeDir(dir, 0o755);
      const cm = await this.configMap(v.configMap.name, v.configMap.optional);
      if (cm)
        writeKeys(
          dir,
          configMapData(cm),
          v.configMap.items,
          v.configMap.defaultMode ?? DEFAULT_MODE,
          `configmap "${v.configMap.name}"`,
          v.configMap.optional,
        );
      return dir;
    }
    if (v.secret) {
      makeDir(dir, 0o755);
      const s = await this.secret(v.secret.secretName, v.secret.optional);
      if (s)
        writeKeys(
          dir,
          secretData(s),
          v.secret.items,
          v.secret.defaultMode ?? DEFAULT_MODE,
          `secret "${v.secret.secretName}"`,
          v.secret.optional,
        );
      return dir;
    }
    if (v.downwardAPI) {
      makeDir(dir, 0o755);
      this.writeDownward(dir, v.downwardAPI.items ?? [], v.downwardAPI.defaultMode ?? DEFAULT_MODE);
      return dir;
    }
    if (v.projected) {
      makeDir(dir, 0o755);
      const mode = v.projected.defaultMode ?? DEFAULT_MODE;
      for (const src of v.projected.sources ?? []) {
        if (src.configMap) {
          const cm = await this.configMap(src.configMap.name, src.configMap.optional);
          if (cm) writeKeys(dir, configMapData(cm), src.configMap.items, mode, `configmap "${src.configMap.name}"`, src.configMap.optional);
        }
        if (src.secret) {
          const s = await this.secret(src.secret.name, src.secret.optional);
          if (s) writeKeys(dir, secretData(s), src.secret.items, mode, `secret "${src.secret.name}"`, src.secret.optional);
        }
        if (src.downwardAPI) this.writeDownward(dir, src.downwardAPI.items ?? [], mode);
        if (src.serviceAccountToken) {
          const t = src.serviceAccountToken;
          await this.writeToken(join(dir, safePath(t.path)), t.audience, t.expirationSeconds ?? 3600, mode);
        }
      }
      return dir;
    }
    const kind = Object.keys(v).find((k) => k !== 'name') ?? 'unknown';
    throw new VolumeError(`${kind} volumes are not supported by the local pod runner`);
  }

  private async configMap(name: string | undefined, optional?: boolean): Promise<V1ConfigMap | undefined> {
    try {
      return await this.deps.client.get<V1ConfigMap>(CONFIGMAPS, this.ns, name ?? '');
    } catch (err) {
      if (isNotFound(err) && optional) return undefined;
      throw isNotFound(err) ? new VolumeError(`configmap "${name}" not found`) : err;
    }
  }

  private async secret(name: string | undefined, optional?: boolean): Promise<V1Secret | undefined> {
    try {
      return await this.deps.client.get<V1Secret>(SECRETS, this.ns, name ?? '');
    } catch (err) {
      if (isNotFound(err) && optional) return undefined;
      throw isNotFound(err) ? new VolumeError(`secret "${name}" not found`) : err;
    }
  }

  private writeDownward(dir: string, items: V1DownwardAPIVolumeFile[], mode: number): void {
    for (const item of items) {
      let value: string;
      if (item.fieldRef) value = fieldRefValue(this.pod, item.fieldRef, true);
      else if (item.resourceFieldRef) {
        const name = item.resourceFieldRef.containerName;
        const c = this.pod.spec?.containers.find((x) => x.name === name);
        if (!c) throw new VolumeError(`downwardAPI item ${item.path}: container "${name ?? ''}" not found`);
        value = resourceFieldValue(c, item.resourceFieldRef, this.deps.node);
      } else continue;
      writeAtomic(join(dir, safePath(item.path)), value, item.mode ?? mode);
    }
  }

  /** Issues a pod-bound token and schedules its refresh at 80 % of its lifetime. */
  private async writeToken(path: string, audience: string | undefined, expirationSeconds: number, mode: number): Promise<void> {
    const sa = this.pod.spec?.serviceAccountName || 'default';
    const token = await requestServiceAccountToken(this.deps.client, this.ns, sa, {
      audiences: audience ? [audience] : [],
      expirationSeconds,
      boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: this.pod.metadata!.name!, uid: this.pod.metadata!.uid! },
    });
    writeAtomic(path, token, mode);
    if (this.stopped) return;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.writeToken(path, audience, expirationSeconds, mode).catch((err) =>
        this.deps.log('refreshing a service account token failed', { pod: this.pod.metadata?.name, path, error: errorMessage(err) }),
      );
    }, expirationSeconds * 800);
    timer.unref();
    this.timers.add(timer);
  }
}

function configMapData(cm: V1ConfigMap): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  for (const [k, v] of Object.entries(cm.data ?? {})) out.set(k, Buffer.from(v, 'utf8'));
  for (const [k, v] of Object.entries(cm.binaryData ?? {})) out.set(k, Buffer.from(v, 'base64'));
  return out;
}

function secretData(s: V1Secret): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  for (const [k, v] of Object.entries(s.data ?? {})) out.set(k, Buffer.from(v, 'base64'));
  for (const [k, v] of Object.entries(s.stringData ?? {})) out.set(k, Buffer.from(v, 'utf8'));
  return out;
}

function writeKeys(
  dir: string,
  data: Map<string, Buffer>,
  items: V1KeyToPath[] | undefined,
  mode: number,
  what: string,
  optional?: boolean,
): void {
  if (!items?.length) {
    for (const [k, v] of data) writeAtomic(join(dir, safePath(k)), v, mode);
    return;
  }
  for (const item of items) {
    const v = data.get(item.key);
    if (v === undefined) {
      if (optional) continue;
      throw new VolumeError(`${what} has no key "${item.key}"`);
    }
    writeAtomic(join(dir, safePath(item.path)), v, item.mode ?? mode);
  }
}

/** Relative paths only, no `..` (the spec's rule for item paths). */
function safePath(p: string): string {
  const n = normalize(p);
  if (n.startsWith('/') || n === '..' || n.startsWith('../'))
    throw new VolumeError(`path "${p}" must be relative and must not contain ".."`);
  return n;
}

function makeDir(dir: string, mode: number): string {
  mkdirSync(dir, { recursive: true });
  chmodSync(dir, mode);
  return dir;
}

function writeAtomic(path: string, data: string | Buffer, mode: number): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.tmp-${process.pid}`;
  writeFileSync(tmp, data, { mode });
  chmodSync(tmp, mode);
  renameSync(tmp, path);
}
