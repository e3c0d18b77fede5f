/**
 * Finds a workflow's artifact repository (src/artifacts/repository.ts says which ConfigMap and
 * key) when a step pod with output artifacts is about to be created. ConfigMaps are read with a
 * GET, remembered for a few seconds so a fan-out of a thousand pods costs one read, and never
 * watched: most namespaces have none and the controller should not cache every ConfigMap.
 * The controller reads no Secret: the repository only names them.
 */
import type { V1ConfigMap } from '@kubernetes/client-node';
import type { Workflow } from '../api/index.js';
import { REPOSITORIES_CONFIGMAP, RepositoryError, repositoryFrom, type ArtifactRepository } from '../artifacts/repository.js';
import type { KubeClient } from '../kube/client.js';
import { isNotFound } from '../kube/errors.js';
import { CONFIGMAPS } from '../kube/resource.js';

const TTL_MS = 5_000;

export class ArtifactRepositories {
  private readonly cache = new Map<string, { at: number; cm: V1ConfigMap | undefined }>();

  constructor(
    private readonly client: KubeClient,
    /** The controller's namespace: its `artifact-repositories` is the controller-wide default. */
    private readonly installNamespace: string,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * The workflow's repository, or undefined when none is configured anywhere (outputs that name
   * their own full location still work then). A ConfigMap that exists but is wrong, or a
   * reference to one that does not exist, is a RepositoryError naming it.
   */
  async forWorkflow(wf: Workflow): Promise<ArtifactRepository | undefined> {
    const ns = wf.metadata.namespace!;
    const ref = wf.spec.artifactRepositoryRef;
    if (ref) {
      const name = ref.configMap || REPOSITORIES_CONFIGMAP;
      const cm = await this.read(ns, name);
      if (!cm) throw new RepositoryError(`spec.artifactRepositoryRef: ConfigMap ${ns}/${name} does not exist`);
      return repositoryFrom(cm, ref.key || undefined);
    }
    const own = await this.read(ns, REPOSITORIES_CONFIGMAP);
    if (own) return repositoryFrom(own, undefined);
    const global = ns === this.installNamespace ? undefined : await this.read(this.installNamespace, REPOSITORIES_CONFIGMAP);
    return global ? repositoryFrom(global, undefined) : undefined;
  }

  private async read(ns: string, name: string): Promise<V1ConfigMap | undefined> {
    const key = `${ns}/${name}`;
    const hit = this.cache.get(key);
    if (hit && this.now() - hit.at < TTL_MS) return hit.cm;
    let cm: V1ConfigMap | undefined;
    try {
      cm = await this.client.get<V1ConfigMap>(CONFIGMAPS, ns, name);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    this.cache.set(key, { at: this.now(), cm });
    if (this.cache.size > 1000) this.cache.delete(this.cache.keys().next().value as string);
    return cm;
  }
}
