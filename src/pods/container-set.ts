/**
 * The containers of a containerSet step: one pod, every container of the set started at once,
 * each behind the emissary, which runs its command once the containers it depends on succeeded
 * (emissary/set_mode.go). The container named `main` is the pod's main container (outputs,
 * input artifacts, logs, as in a container step); the others only record their exit code in the
 * shared volume. Without a `main`, the last container to finish ends the set for the wait
 * container and the sidecars.
 */
import type { V1Container, V1EnvVar, V1VolumeMount } from '@kubernetes/client-node';
import { intOrStringToNumber, parseGoDuration, type ContainerNode, type ContainerSetTemplate } from '../api/index.js';
import { DEFAULT_TERMINATION_MESSAGE_PATH, EMISSARY_PATH, VAR_DIR, VAR_VOLUME } from './layout.js';
import { INIT_CONTAINER, MAIN_CONTAINER, WAIT_CONTAINER } from '../api/index.js';

/** Pod annotation: the set's container names, in order (observe-pod.ts names a failed one). */
export const ANNOTATION_CONTAINER_SET = 'workflows.plugflow.io/container-set';

/** The termination message of a container of the set whose command did not run (emissary/set_mode.go). */
export const SKIPPED_PREFIX = 'skipped: ';

export interface SetContainers {
  /** Every container of the set, in the set's order. */
  containers: V1Container[];
  /** The container named main, if the set has one. */
  main: V1Container | undefined;
}

/**
 * @param buildMain builds the main container from a container record (build-pod.ts: the same
 * code as a container step's main container)
 */
export function buildSetContainers(
  set: ContainerSetTemplate,
  where: string,
  buildMain: (c: ContainerNode, field: string) => V1Container,
  userArgv: (c: ContainerNode, what: string) => { command: string[]; args: string[] },
  copyFields: (c: ContainerNode) => V1Container,
): SetContainers {
  const members = set.containers ?? [];
  if (members.length === 0) throw new Error(`${where}: containerSet.containers is empty`);
  const names = members.map((c, i) => {
    if (!c.name) throw new Error(`${where}: containerSet.containers[${i}].name is required`);
    if (c.name === INIT_CONTAINER || c.name === WAIT_CONTAINER)
      throw new Error(`${where}: container name "${c.name}" is reserved by plugflow`);
    return c.name;
  });
  const hasMain = names.includes(MAIN_CONTAINER);
  const shared = (set.volumeMounts ?? []) as V1VolumeMount[];
  const retries = set.retryStrategy ? intOrStringToNumber(set.retryStrategy.retries, `${where}: containerSet.retryStrategy.retries`) : 0;
  const waitMs = set.retryStrategy?.duration
    ? parseGoDuration(set.retryStrategy.duration, { field: `${where}: containerSet.retryStrategy.duration` })
    : 0;
  const setEnv = (c: ContainerNode): V1EnvVar[] => [
    { name: 'PLUGFLOW_SET_NAME', value: c.name! },
    { name: 'PLUGFLOW_SET_AFTER', value: (c.dependencies ?? []).join(',') },
    { name: 'PLUGFLOW_SET_MEMBERS', value: names.join(',') },
    { name: 'PLUGFLOW_SET_HAS_MAIN', value: String(hasMain) },
    { name: 'PLUGFLOW_SET_RETRIES', value: String(retries) },
    { name: 'PLUGFLOW_SET_RETRY_WAIT_MS', value: String(Math.round(waitMs)) },
    { name: 'PLUGFLOW_SET_TERMINATION_LOG', value: c.terminationMessagePath || DEFAULT_TERMINATION_MESSAGE_PATH },
  ];
  let main: V1Container | undefined;
  const containers = members.map((c, i) => {
    const field = `containerSet.containers[${i}]`;
    if (!c.image) throw new Error(`${where}: ${field}.image is required`);
    const own = (c.volumeMounts ?? []) as V1VolumeMount[];
    if (own.some((m) => m.mountPath.replace(/\/+$/, '') === VAR_DIR))
      throw new Error(`${where}: ${field}.volumeMounts may not use ${VAR_DIR}, plugflow mounts its own volume there`);
    const taken = new Set(own.map((m) => m.mountPath));
    const mounts = [...own, ...shared.filter((m) => !taken.has(m.mountPath))];
    if (c.name === MAIN_CONTAINER) {
      const built = buildMain({ ...c, volumeMounts: mounts as ContainerNode['volumeMounts'] }, field);
      built.env = [...(built.env ?? []), ...setEnv(c)];
      main = built;
      return built;
    }
    const { command, args } = userArgv(c, `${where}: ${field}`);
    return {
      ...copyFields(c),
      name: c.name!,
      command: [EMISSARY_PATH, '--', ...command],
      args,
      env: [...((c.env ?? []) as V1EnvVar[]), ...setEnv(c)],
      volumeMounts: [...mounts, { name: VAR_VOLUME, mountPath: VAR_DIR }],
    } satisfies V1Container;
  });
  return { containers, main };
}
