/**
 * Which Pod Security Standards level the controller applies to the pods of one namespace.
 *
 * - The controller has a level (`--pod-security-level`, env PLUGFLOW_POD_SECURITY_LEVEL;
 *   default `baseline`): the floor for every namespace, set by whoever installs plugflow.
 * - A namespace opts into a stricter level with the label `workflows.plugflow.io/pod-security`.
 * - The standard Pod Security Admission label `pod-security.kubernetes.io/enforce` is honoured
 *   too: a namespace the API server enforces `restricted` on gets `restricted` from plugflow,
 *   so the workflow fails with plugflow's message (level, field, fix) before the API server
 *   would refuse the pod. Its `-version` label is not read: plugflow checks the latest controls.
 *
 * The strictest of the three wins: a namespace label can raise the level, never lower it below
 * the controller's (labels on a namespace are usually writable by its admins, who are not the
 * ones who decide what the cluster's nodes may be exposed to). A cluster where a few namespaces
 * need `privileged` runs the controller at `privileged` and labels the other namespaces.
 */
import { LABEL_PREFIX } from '../api/index.js';
import { POD_SECURITY_LEVELS, type PodSecurityLevel } from './pod-policy.js';

export const LABEL_POD_SECURITY = `${LABEL_PREFIX}pod-security`;
export const LABEL_PSA_ENFORCE = 'pod-security.kubernetes.io/enforce';
export const DEFAULT_POD_SECURITY_LEVEL: PodSecurityLevel = 'baseline';
export const ENV_POD_SECURITY_LEVEL = 'PLUGFLOW_POD_SECURITY_LEVEL';

export function isPodSecurityLevel(v: unknown): v is PodSecurityLevel {
  return typeof v === 'string' && (POD_SECURITY_LEVELS as readonly string[]).includes(v);
}

/** Parses a level given by an operator (flag, env); throws naming `where` for anything else. */
export function parsePodSecurityLevel(value: string, where: string): PodSecurityLevel {
  if (isPodSecurityLevel(value)) return value;
  throw new Error(`${where}: ${JSON.stringify(value)} is not a pod security level; use one of ${POD_SECURITY_LEVELS.join(', ')}`);
}

export interface NamespaceLevel {
  level: PodSecurityLevel;
  /** Where the level comes from, for messages: the controller setting, or the namespace label. */
  source: string;
}

const rank = (l: PodSecurityLevel): number => POD_SECURITY_LEVELS.indexOf(l);

/**
 * The level for a namespace with these labels. An unknown value of plugflow's own label makes
 * the namespace `restricted` (fail closed: a typo must not weaken what its admin asked for);
 * an unknown PSA value is ignored, as the API server treats it as its own default.
 */
export function namespaceLevel(labels: Readonly<Record<string, string>> | undefined, controllerLevel: PodSecurityLevel): NamespaceLevel {
  let best: NamespaceLevel = { level: controllerLevel, source: 'controller setting --pod-security-level' };
  const own = labels && Object.prototype.hasOwnProperty.call(labels, LABEL_POD_SECURITY) ? labels[LABEL_POD_SECURITY] : undefined;
  const psa = labels && Object.prototype.hasOwnProperty.call(labels, LABEL_PSA_ENFORCE) ? labels[LABEL_PSA_ENFORCE] : undefined;
  const candidates: NamespaceLevel[] = [];
  if (own !== undefined)
    candidates.push({ level: isPodSecurityLevel(own) ? own : 'restricted', source: `namespace label ${LABEL_POD_SECURITY}=${own}` });
  if (isPodSecurityLevel(psa)) candidates.push({ level: psa, source: `namespace label ${LABEL_PSA_ENFORCE}=${psa}` });
  for (const c of candidates) if (rank(c.level) > rank(best.level)) best = c;
  return best;
}
