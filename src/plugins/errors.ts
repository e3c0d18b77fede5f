/**
 * Errors of src/plugins, in one place. Each carries every problem found, one per line, so a
 * user fixes a plugin in one go and discovery logs the whole reason.
 */

/** `plugin.yaml` (or a plugin directory) cannot be built. */
export class PluginBuildError extends Error {
  readonly code = 'PLUGIN_BUILD';
  constructor(
    readonly source: string,
    readonly problems: readonly string[],
  ) {
    super(`${source}: ${problems.join('; ')}`);
    this.name = 'PluginBuildError';
  }
}

/** A ConfigMap labelled as an executor plugin that cannot be read back into a plugin. */
export class PluginConfigMapError extends Error {
  readonly code = 'PLUGIN_CONFIGMAP';
  constructor(
    readonly namespace: string,
    readonly configMapName: string,
    readonly problems: readonly string[],
  ) {
    super(`executor plugin ConfigMap ${namespace}/${configMapName} is malformed: ${problems.join('; ')}`);
    this.name = 'PluginConfigMapError';
  }
}

/** The agent pod cannot be built for this set of plugins (port or name clash, missing secret). */
export class AgentPodError extends Error {
  readonly code = 'AGENT_POD';
  constructor(
    readonly workflow: string,
    readonly problems: readonly string[],
  ) {
    super(`cannot build the agent pod of workflow ${workflow}: ${problems.join('; ')}`);
    this.name = 'AgentPodError';
  }
}
