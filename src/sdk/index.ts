/**
 * The plugin SDK: write an executor plugin in TypeScript. See examples/plugins/progress.
 */
export { createPluginServer, pluginRequestHandler, servePlugin } from './plugin-server.js';
export type { ExecuteHandler, PluginContext, PluginServerOptions, RunningPlugin } from './plugin-server.js';
export { failed, outputParameters, pending, running, succeeded } from './replies.js';
export type { Details, Later } from './replies.js';
export { checkPlugin } from './plugin-check.js';
export type { CheckResult, CheckOptions } from './plugin-check.js';
export type { ExecuteTemplateArgs, ExecuteTemplateReply, NodeResult, Outputs, Template } from '../api/index.js';
