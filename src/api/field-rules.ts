/**
 * The rule of one field in THE list of supported and refused fields (supported-fields.ts) and
 * the three ways to write one; a module of its own so that the record modules can use them
 * without importing each other.
 */
import type { RecordName } from './supported-fields.js';

/** How a supported field holds its record: one object, a list, a list of lists, a map by key. */
export type FieldShape = 'one' | 'list' | 'groups' | 'map';

export type FieldRule =
  { status: 'supported'; record?: RecordName; shape?: FieldShape; note?: string } | { status: 'refused'; reason: string };

export const ok = (note?: string): FieldRule => ({ status: 'supported', ...(note ? { note } : {}) });
export const rec = (record: RecordName, shape: FieldShape = 'one', note?: string): FieldRule => ({
  status: 'supported',
  record,
  shape,
  ...(note ? { note } : {}),
});
export const no = (reason: string): FieldRule => ({ status: 'refused', reason });

/** Notes several records share. */
export const KUBE = 'passed to Kubernetes unchanged';

/** Pod-level resources (Kubernetes' pod.spec.resources), workflow and template level. */
export const POD_RESOURCES_NOTE =
  "the step pod's spec.resources: one budget of requests and limits shared by all its containers, plugflow's init and wait included; cpu, memory and hugepages-* only, no claims";

/** Dynamic Resource Allocation claims (Kubernetes' pod.spec.resourceClaims). */
export const RESOURCE_CLAIMS_NOTE =
  "the step pod's spec.resourceClaims: each a name and one of resourceClaimName, resourceClaimTemplateName; a container gets a claim it names in its resources.claims";
