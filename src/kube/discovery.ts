/**
 * Which REST resource serves a kind: the API server's discovery documents (`/api/v1`,
 * `/apis/<group>/<version>`), read once per group version and again when a kind is missing (a
 * CRD applied a moment ago). Used to apply manifests of any kind, as kubectl does.
 */
import type { KubeClient } from './client.js';
import type { ResourceType } from './resource.js';

interface ApiResourceList {
  resources?: { name: string; kind: string; namespaced: boolean; singularName?: string; shortNames?: string[] }[];
}

interface ApiGroupList {
  groups?: { name: string; preferredVersion?: { groupVersion: string } }[];
}

export class Discovery {
  private readonly lists = new Map<string, Promise<ApiResourceList>>();

  constructor(private readonly kube: KubeClient) {}

  /** The resource type of `kind` in `apiVersion` (`v1`, `apps/v1`, …); an error naming both when none. */
  async resourceFor(apiVersion: string, kind: string): Promise<ResourceType> {
    const slash = apiVersion.indexOf('/');
    const group = slash < 0 ? '' : apiVersion.slice(0, slash);
    const version = slash < 0 ? apiVersion : apiVersion.slice(slash + 1);
    for (const fresh of [false, true]) {
      const list = await this.list(apiVersion, fresh);
      // Subresources (`pods/log`) share the kind of their parent; the parent has no slash.
      const r = list.resources?.find((x) => x.kind === kind && !x.name.includes('/'));
      if (r) return { group, version, plural: r.name, kind, namespaced: r.namespaced };
    }
    throw new Error(`the API server serves no kind ${kind} in ${apiVersion} (is its CustomResourceDefinition installed?)`);
  }

  /**
   * The resource type a kubectl argument names: a plural, singular, short name or kind, with an
   * optional group (`pods`, `pod`, `po`, `Pod`, `jobs.batch`, `job.batch`,
   * `workflows.argoproj.io`), looked up in the core group first, then every group's preferred
   * version. An error naming the argument when none serves it.
   */
  async resourceByName(arg: string): Promise<ResourceType> {
    const lower = arg.toLowerCase();
    for (const fresh of [false, true]) {
      for (const apiVersion of await this.groupVersions(fresh)) {
        const slash = apiVersion.indexOf('/');
        const group = slash < 0 ? '' : apiVersion.slice(0, slash);
        const version = slash < 0 ? apiVersion : apiVersion.slice(slash + 1);
        // `job.batch`: `job` in group batch; `job` alone: in any group (core first).
        const bases = group && lower.endsWith(`.${group}`) ? [lower.slice(0, -group.length - 1)] : [lower];
        const list = await this.list(apiVersion, fresh).catch(() => ({}) as ApiResourceList);
        const r = list.resources?.find(
          (x) =>
            !x.name.includes('/') &&
            bases.some((b) => x.name === b || x.singularName === b || x.kind.toLowerCase() === b || (x.shortNames ?? []).includes(b)),
        );
        if (r) return { group, version, plural: r.name, kind: r.kind, namespaced: r.namespaced };
      }
    }
    throw new Error(`the API server serves no resource type ${JSON.stringify(arg)} (is its CustomResourceDefinition installed?)`);
  }

  private groups?: Promise<string[]>;

  private groupVersions(fresh: boolean): Promise<string[]> {
    if (!this.groups || fresh) {
      this.groups = this.kube.getText('/apis').then((text) => {
        const list = JSON.parse(text) as ApiGroupList;
        const versions = (list.groups ?? []).map((g) => g.preferredVersion?.groupVersion).filter((v): v is string => !!v);
        return ['v1', ...versions];
      });
      this.groups.catch(() => (this.groups = undefined));
    }
    return this.groups;
  }

  private list(apiVersion: string, fresh: boolean): Promise<ApiResourceList> {
    let p = this.lists.get(apiVersion);
    if (!p || fresh) {
      const path = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
      p = this.kube.getText(path).then((text) => JSON.parse(text) as ApiResourceList);
      this.lists.set(apiVersion, p);
      p.catch(() => this.lists.delete(apiVersion));
    }
    return p;
  }
}
