/**
 * The closed sets of string values the CRDs and validators check. The spec lists some of them
 * (resource action, merge strategy); for the others it says "a string" and these are the values
 * the peer system accepts, so documents written for it keep working.
 */

/** `retryStrategy.retryPolicy`. */
export const RETRY_POLICIES = ['Always', 'OnFailure', 'OnError', 'OnTransientError'] as const;

/** `resource.action` (spec). */
export const RESOURCE_ACTIONS = ['get', 'create', 'apply', 'delete', 'replace', 'patch'] as const;

/** `resource.mergeStrategy` (spec; default strategic). */
export const MERGE_STRATEGIES = ['strategic', 'merge', 'json'] as const;

/** `spec.shutdown` of a Workflow. */
export const SHUTDOWN_STRATEGIES = ['Stop', 'Terminate'] as const;

/** Node phases (see workflow-status.ts). */
export const NODE_PHASES = ['Pending', 'Running', 'Succeeded', 'Failed', 'Error', 'Skipped', 'Omitted'] as const;

/** Methods the HTTP template accepts (checked by the validator, not the CRD, so tags still work). */
export const HTTP_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'CONNECT', 'TRACE'] as const;
