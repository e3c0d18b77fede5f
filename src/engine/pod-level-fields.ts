/**
 * `podResources` and `resourceClaims`, of the workflow (`spec.`) and of a template: what
 * Kubernetes refuses in them beyond their shape, checked before the workflow runs so the refusal
 * names the workflow field instead of failing a pod half-way through the run. The pod builder
 * (src/pods/build-pod.ts) puts them in the step pod as written; a template's replace the
 * workflow's as a whole.
 *
 *   - podResources is the pod's spec.resources (pod-level resources, GA in Kubernetes 1.35):
 *     requests and limits of cpu, memory and hugepages-* only, and no claims (a container
 *     names its claims in its own resources.claims);
 *   - resourceClaims is the pod's spec.resourceClaims (Dynamic Resource Allocation): each entry
 *     has a name, unique in the list, and exactly one of resourceClaimName (an existing claim,
 *     shared) and resourceClaimTemplateName (a claim made for the pod, deleted with it).
 *
 * Values with `{{…}}` tags (template level, rendered with the inputs) are left to the API server.
 */
import type { PodResourceClaim, ResourceRequirements } from '../api/index.js';

type Add = (field: string, detail: string) => void;

/** Checks the podResources and resourceClaims of `owner` (a workflow spec or a template) found at `where`. */
export function checkPodLevelFields(
  owner: { podResources?: ResourceRequirements; resourceClaims?: PodResourceClaim[] },
  where: string,
  add: Add,
): void {
  if (owner.podResources !== undefined && owner.podResources !== null) checkPodResources(owner.podResources, `${where}.podResources`, add);
  if (owner.resourceClaims !== undefined && owner.resourceClaims !== null)
    checkResourceClaims(owner.resourceClaims, `${where}.resourceClaims`, add);
}

const POD_LEVEL_RESOURCE = /^(cpu|memory|hugepages-.+)$/;

function checkPodResources(r: ResourceRequirements, at: string, add: Add): void {
  const raw = r as unknown as Record<string, unknown>;
  if (raw.claims !== undefined)
    add(
      `${at}.claims`,
      "is not allowed at pod level: list the pod's claims in resourceClaims and name them in a container's resources.claims",
    );
  for (const list of ['limits', 'requests'] as const) {
    const names = raw[list];
    if (names === undefined || names === null) continue;
    if (typeof names !== 'object' || Array.isArray(names)) {
      add(`${at}.${list}`, 'must map resource names to quantities');
      continue;
    }
    for (const name of Object.keys(names))
      if (!name.includes('{{') && !POD_LEVEL_RESOURCE.test(name))
        add(`${at}.${list}.${name}`, 'is not a pod-level resource: Kubernetes takes only cpu, memory and hugepages-* there');
  }
}

function checkResourceClaims(claims: PodResourceClaim[], at: string, add: Add): void {
  if (!Array.isArray(claims)) {
    add(at, 'must be a list');
    return;
  }
  const seen = new Set<string>();
  claims.forEach((c, i) => {
    const name = c && typeof c === 'object' && typeof c.name === 'string' ? c.name : '';
    const field = `${at}[${name || i}]`;
    if (!name) {
      add(`${at}[${i}].name`, 'is required: containers name the claim in resources.claims');
      return;
    }
    if (seen.has(name)) add(field, 'is given twice');
    seen.add(name);
    const sources = (['resourceClaimName', 'resourceClaimTemplateName'] as const).filter((k) => c[k] !== undefined && c[k] !== null);
    if (sources.length !== 1)
      add(
        field,
        sources.length === 0
          ? 'needs one of resourceClaimName (an existing ResourceClaim) and resourceClaimTemplateName (a ResourceClaimTemplate)'
          : 'has both resourceClaimName and resourceClaimTemplateName; keep one',
      );
  });
}
