/**
 * The containers of the artifact driver plugins a step pod uses (artifacts/drivers.ts,
 * artifacts/plugin-driver.ts), as the peer lays them out: per driver an emptyDir
 * `artifact-plugin-<name>` mounted at /tmp/artifact-plugins/<name> in the driver's container and
 * in the plugflow containers that talk to it (a step pod's init and wait, the artifact GC pod's gc), and the driver's container `artifact-plugin-<name>`,
 * which runs the operator-registered image with its socket path /tmp/artifact-plugins/<name>/socket
 * as its one argument.
 *
 * The driver serves both sides — the init container's loads and the wait container's saves — so it
 * runs as a Kubernetes sidecar (an init container with restartPolicy Always) placed before
 * plugflow's init container: started first, kept through the main container, and stopped by the
 * kubelet once the regular containers have ended. It never holds the pod open, and its exit code
 * does not decide the pod's phase.
 *
 * What the driver gets: its socket directory and nothing else of the pod — no Secret (its
 * configuration comes over the socket), not plugflow's shared volume, and no service-account
 * token even where the pod mounts one (an empty read-only directory over the token's path, which
 * the API server's ServiceAccount admission then leaves alone). Its security context is
 * plugflow's own containers' (no privilege escalation, no capabilities); the pod policy checks it
 * like every container of the pod.
 */
import type { V1Container, V1PodSpec } from '@kubernetes/client-node';
import type { ArtifactDriver } from '../artifacts/drivers.js';
import { socketDir, socketPath } from '../artifacts/plugin-driver.js';
import { INIT_CONTAINER, WAIT_CONTAINER } from '../api/index.js';

/** The prefix of a driver's container and volume names (the peer's). */
export const ARTIFACT_PLUGIN_PREFIX = 'artifact-plugin-';
/** Where a pod's service-account token is mounted; the driver gets an empty directory there. */
export const SERVICE_ACCOUNT_TOKEN_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';
const NO_TOKEN_VOLUME = 'artifact-plugin-no-token';

/** `spec` with the drivers `used` added; each must be registered (the plan has checked it). */
export function withArtifactDrivers(
  spec: V1PodSpec,
  used: readonly string[],
  registered: readonly ArtifactDriver[],
  where: string,
  talkers: readonly string[] = [INIT_CONTAINER, WAIT_CONTAINER],
): V1PodSpec {
  if (used.length === 0) return spec;
  const drivers = used.map((name) => {
    const d = registered.find((x) => x.name === name);
    if (!d) throw new Error(`${where}: artifact driver "${name}" is not registered with the controller (PLUGFLOW_ARTIFACT_DRIVERS)`);
    return d;
  });
  const socketMounts = drivers.map((d) => ({ name: `${ARTIFACT_PLUGIN_PREFIX}${d.name}`, mountPath: socketDir(d.name) }));
  const mountSockets = (c: V1Container): V1Container =>
    talkers.includes(c.name) ? { ...c, volumeMounts: [...(c.volumeMounts ?? []), ...socketMounts] } : c;
  const driverContainers: V1Container[] = drivers.map((d) => ({
    name: `${ARTIFACT_PLUGIN_PREFIX}${d.name}`,
    image: d.image,
    ...(d.command ? { command: [...d.command] } : {}),
    args: [socketPath(d.name)],
    restartPolicy: 'Always',
    volumeMounts: [
      { name: `${ARTIFACT_PLUGIN_PREFIX}${d.name}`, mountPath: socketDir(d.name) },
      { name: NO_TOKEN_VOLUME, mountPath: SERVICE_ACCOUNT_TOKEN_DIR, readOnly: true },
    ],
    terminationMessagePolicy: 'FallbackToLogsOnError',
    securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
  }));
  return {
    ...spec,
    initContainers: [...driverContainers, ...(spec.initContainers ?? []).map(mountSockets)],
    containers: spec.containers.map(mountSockets),
    volumes: [
      ...(spec.volumes ?? []),
      ...drivers.map((d) => ({ name: `${ARTIFACT_PLUGIN_PREFIX}${d.name}`, emptyDir: {} })),
      { name: NO_TOKEN_VOLUME, emptyDir: {} },
    ],
  };
}
