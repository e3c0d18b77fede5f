/**
 * What the server is, with the peer's paths and shapes, for its CLI (`argo version`) and UI:
 *
 *   GET  /api/v1/version         → {version, buildDate, gitCommit, gitTag, gitTreeState, goVersion, compiler, platform}
 *   GET  /api/v1/info            → {links: [], columns: [], navColor: "", modals: {}}
 *   POST /api/v1/tracking/event  {name}  → {}   (the peer's UI reports page views here; nothing is kept)
 *
 * `goVersion` and `compiler` carry the Node.js version and "node" (the peer's clients print them as
 * they come). Every caller the server accepts may ask; the answers hold nothing about its objects.
 */
import type { FastifyInstance } from 'fastify';
import { PLUGFLOW_RELEASE } from '../../api/index.js';

export interface VersionInfo {
  version: string;
  buildDate: string;
  gitCommit: string;
  gitTag: string;
  gitTreeState: string;
  goVersion: string;
  compiler: string;
  platform: string;
}

export function versionInfo(): VersionInfo {
  return {
    version: `v${PLUGFLOW_RELEASE}`,
    buildDate: '',
    gitCommit: '',
    gitTag: `v${PLUGFLOW_RELEASE}`,
    gitTreeState: '',
    goVersion: process.version,
    compiler: 'node',
    platform: `${process.platform}/${process.arch}`,
  };
}

/** Registered inside workflowRoutes, so its onRequest hook (caller, namespace allow-list) applies. */
export function serverInfoRoutes(app: FastifyInstance): void {
  const version = versionInfo();
  app.get('/api/v1/version', async () => version);
  app.get('/api/v1/info', async () => ({
    links: [],
    columns: [],
    navColor: '',
    modals: {},
  }));
  app.post('/api/v1/tracking/event', async () => ({}));
}
