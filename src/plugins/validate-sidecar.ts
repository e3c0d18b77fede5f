/**
 * The rules a plugin's sidecar container must follow (spec document 000 "Rules for
 * spec.sidecar.container" and the port rules; COMPAT.md "Executor plugin build").
 *
 * Used twice: by `plugflow plugin build` on `plugin.yaml`, and by discovery on a ConfigMap, so a
 * hand-edited ConfigMap cannot smuggle in a sidecar the build would have refused. Errors start
 * with `sidecar is invalid:` and name the field; warnings are advice that does not block.
 */
import { compareQuantities, parseQuantity, PLUGIN_TOKEN_PATH, type Container, type ParsedQuantity } from '../api/index.js';
import { literalSecretFinding } from './literal-secrets.js';

export const SIDECAR_INVALID = 'sidecar is invalid:';

/** Ports that other software commonly binds; a plugin on one of them clashes sooner or later. */
export const COMMON_PORTS: readonly number[] = [80, 443, 8080, 8081, 8443];

/** Container names the agent pod uses for its own containers. */
export const AGENT_RESERVED_CONTAINER_NAMES: readonly string[] = ['main', 'init'];

/** Directory holding the plugin's token inside its sidecar; the agent pod mounts it. */
export const TOKEN_DIR_IN_SIDECAR = PLUGIN_TOKEN_PATH.slice(0, PLUGIN_TOKEN_PATH.lastIndexOf('/'));

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

export interface SidecarReport {
  errors: string[];
  warnings: string[];
}

/**
 * Checks a sidecar container already known to have the right field types (see plugin-shape.ts).
 * `at` is the field path of the container, e.g. `spec.sidecar.container`.
 */
export function validateSidecar(container: Container, at: string): SidecarReport {
  const errors: string[] = [];
  const warnings: string[] = [];
  const err = (field: string, detail: string) => errors.push(`${SIDECAR_INVALID} ${at}.${field} ${detail}`);

  if (!container.name) err('name', 'is required (it names the sidecar in the agent pod)');
  else if (!DNS_LABEL.test(container.name) || container.name.length > 63) {
    err('name', `"${container.name}" must be a DNS label: lower-case letters, digits and '-', at most 63 characters`);
  } else if (AGENT_RESERVED_CONTAINER_NAMES.includes(container.name)) {
    err('name', `"${container.name}" is reserved for the agent's own containers; choose another name`);
  }
  if (!container.image) err('image', 'is required');

  checkPorts(container, err, (m) => warnings.push(`${at}.${m}`));
  checkResources(container, err);

  // Plugin sidecars never run as root, privileged or with added capabilities (README "Pod
  // security"): stricter than spec 000, which lets a plugin run as root if it says so.
  const sc = container.securityContext;
  if (sc?.runAsNonRoot === undefined) err('securityContext.runAsNonRoot', 'is required and must be true (plugins never run as root)');
  else if (sc.runAsNonRoot !== true)
    err('securityContext.runAsNonRoot', `is ${JSON.stringify(sc.runAsNonRoot)}; it must be true (plugins never run as root)`);
  if (sc?.runAsUser === undefined) err('securityContext.runAsUser', 'is required (a numeric user id, for example 1000)');
  else if (sc.runAsUser === 0) err('securityContext.runAsUser', 'is 0 (root); plugins never run as root, choose a non-zero user id');
  const raw = (sc ?? {}) as Record<string, unknown>;
  if (raw.privileged !== undefined && raw.privileged !== false)
    err('securityContext.privileged', 'must be false or absent (plugins are never privileged)');
  const add = (raw.capabilities as { add?: unknown } | undefined)?.add;
  if (add !== undefined && !(Array.isArray(add) && add.length === 0))
    err('securityContext.capabilities.add', 'must be absent (plugins get no added capabilities)');
  if (raw.allowPrivilegeEscalation !== undefined && raw.allowPrivilegeEscalation !== false) {
    err('securityContext.allowPrivilegeEscalation', 'must be false or absent (the agent pod sets false)');
  }

  (container.env ?? []).forEach((env, i) => {
    if (env.value === undefined || env.value === '') return;
    const finding = literalSecretFinding(env.name, env.value);
    if (finding?.refuse) {
      err(`env[${i}].value`, `(${env.name}): ${finding.reason}; secrets must come from a Secret through env[${i}].valueFrom.secretKeyRef`);
    } else if (finding) {
      warnings.push(
        `${at}.env[${i}].value (${env.name}): ${finding.reason}; if it is the secret itself, put it in a Secret and use env[${i}].valueFrom.secretKeyRef ` +
          '(the name or key of a Secret is fine here)',
      );
    }
  });

  (container.volumeMounts ?? []).forEach((m, i) => {
    err(
      `volumeMounts[${i}]`,
      `(${m.name} at ${m.mountPath}) cannot be used: the agent pod has no volumes for plugins, it only mounts the token at ${TOKEN_DIR_IN_SIDECAR}`,
    );
  });

  return { errors, warnings };
}

function checkPorts(container: Container, err: (field: string, detail: string) => void, warn: (m: string) => void): void {
  const ports = container.ports ?? [];
  if (ports.length === 0) {
    err('ports', 'must list at least one port (the agent calls the plugin on its first containerPort)');
    return;
  }
  const seen = new Map<number, number>();
  ports.forEach((p, i) => {
    const n = p.containerPort;
    const prev = seen.get(n);
    if (prev !== undefined) err(`ports[${i}].containerPort`, `${n} is already listed at ports[${prev}]`);
    seen.set(n, i);
    if (COMMON_PORTS.includes(n)) {
      warn(
        `ports[${i}].containerPort ${n} is a common port that other software uses; ` +
          'choose one at random, below 10000 for a published plugin and above 10000 otherwise',
      );
    }
  });
}

function checkResources(container: Container, err: (field: string, detail: string) => void): void {
  const r = container.resources;
  const parsed: Record<string, ParsedQuantity | undefined> = {};
  for (const kind of ['requests', 'limits'] as const) {
    for (const res of ['cpu', 'memory'] as const) {
      const v = r?.[kind]?.[res];
      if (v === undefined || v === null || v === '') {
        err(`resources.${kind}.${res}`, `is required (resources.requests and resources.limits must both give cpu and memory)`);
        continue;
      }
      try {
        parsed[`${kind}.${res}`] = parseQuantity(v, `${kind}.${res}`);
      } catch {
        err(`resources.${kind}.${res}`, `${JSON.stringify(v)} is not a valid quantity (for example 100m, 0.5, 64Mi)`);
      }
    }
  }
  for (const res of ['cpu', 'memory'] as const) {
    const req = parsed[`requests.${res}`];
    const lim = parsed[`limits.${res}`];
    if (req && lim && compareQuantities(req, lim) > 0) {
      err(`resources.requests.${res}`, `(${r!.requests![res]}) must not exceed resources.limits.${res} (${r!.limits![res]})`);
    }
  }
}
