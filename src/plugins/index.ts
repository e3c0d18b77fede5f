/**
 * Public surface of src/plugins for the controller and the CLI: build/read/validate a plugin,
 * parse a discovered ConfigMap, choose a workflow's plugins, build the agent pod.
 */
export * from './errors.js';
export * from './build-plugin.js';
export * from './read-plugin.js';
export * from './validate-sidecar.js';
export * from './parse-configmap.js';
export * from './registry.js';
export * from './plugin-catalog.js';
export * from './agent-names.js';
export * from './plugin-inventory.js';
export * from './workflow-plugins.js';
export { buildPluginDir } from './plugin-dir.js';
