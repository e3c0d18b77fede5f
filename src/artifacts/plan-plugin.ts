/**
 * The plan of an artifact kept by an artifact driver plugin (`plugin: {name, configuration,
 * key}`): the driver must be one the operator registered (drivers.ts); the connection timeout is
 * the artifact's, else the driver's, else the protocol's 5 s. The driver's container is added to
 * the pod by pods/artifact-drivers.ts; the init and wait containers talk to it
 * (plugin-driver.ts). The configuration is passed as written: it is not a place for credentials.
 */
import type { PluginArtifact } from '../api/index.js';
import type { ArtifactDriver } from './drivers.js';
import { unregisteredDetail } from '../engine/index.js';
import { ArtifactPlanError } from './plan-error.js';
import { DEFAULT_CONNECTION_TIMEOUT_S, type PluginLocation } from './plugin-driver.js';

export type { PluginLocation };

/** The registered driver `name` names, or an error naming the field and the drivers there are. */
export function registeredDriver(name: string | undefined, drivers: readonly ArtifactDriver[], field: string): ArtifactDriver {
  if (!name) throw new ArtifactPlanError(`${field}.name is required: it names the artifact driver`);
  const d = drivers.find((x) => x.name === name);
  if (!d)
    throw new ArtifactPlanError(
      `${field}.name ${unregisteredDetail(
        name,
        drivers.map((x) => x.name),
      )}`,
    );
  return d;
}

/** `p` as the pod side needs it; `field` is the record's (`… .plugin`). */
export function pluginLocation(p: PluginArtifact, drivers: readonly ArtifactDriver[], field: string): PluginLocation {
  const d = registeredDriver(p.name, drivers, field);
  if (!p.key) throw new ArtifactPlanError(`${field}.key is required: it is the artifact's place in the driver's store`);
  const timeout = p.connectionTimeoutSeconds || d.connectionTimeoutSeconds || DEFAULT_CONNECTION_TIMEOUT_S;
  return { kind: 'plugin', name: d.name, configuration: p.configuration ?? '', key: p.key, connectionTimeoutSeconds: timeout };
}
