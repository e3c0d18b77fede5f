/**
 * Downloading a node's artifacts, with the peer's paths, as the caller (src/operations/artifacts.ts):
 *
 *   GET /artifact-files/{namespace}/workflows/{name}/{nodeId}/outputs/{artifactName}
 *   GET /artifact-files/{namespace}/workflows/{name}/{nodeId}/inputs/{artifactName}
 *   GET /artifacts/{namespace}/{name}/{nodeId}/{artifactName}          (the peer's older path of outputs)
 *   GET /input-artifacts/{namespace}/{name}/{nodeId}/{artifactName}    (… and of inputs)
 *   GET /api/v1/workflows/{namespace}/{name}/input-artifacts/{nodeId}
 *       → {artifacts: [{name, path?, from, downloadable, reason?}]}  (what the inputs path would do, for the UI)
 *
 * The reply streams the object as it is stored (a `.tgz` for the default tar archive, the file
 * itself for `archive: none`), with Content-Disposition naming it, so `curl -OJ` keeps the name.
 * Whoever can read the workflow and the Secrets its repository names can download, and only from
 * an artifact repository's store (src/operations/artifact-trust.ts): the server reads nothing
 * with its own rights but the installation's own `artifact-repositories` ConfigMap. An input
 * artifact the step fetches itself (http, git, raw data, …) is not downloaded by the server: 403
 * saying so (src/operations/input-artifacts.ts).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { KubeClient } from '../../kube/client.js';
import type { ArtifactTrust } from '../../operations/index.js';
import { openNodeArtifact, type OpenedArtifact } from '../../operations/index.js';
import { describeInputArtifacts } from '../../operations/index.js';

type Params = { namespace: string; name: string; nodeId: string; artifactName: string };

/** Registered inside workflowRoutes, so its onRequest hook (caller, namespace allow-list) applies. */
export function artifactRoutes(app: FastifyInstance, kube: KubeClient, trust: ArtifactTrust): void {
  // The peer's current paths, and its older ones (`/artifacts/…` for outputs, `/input-artifacts/…`).
  const paths: [string, 'outputs' | 'inputs'][] = [
    ['/artifact-files/:namespace/workflows/:name/:nodeId/outputs/:artifactName', 'outputs'],
    ['/artifact-files/:namespace/workflows/:name/:nodeId/inputs/:artifactName', 'inputs'],
    ['/artifacts/:namespace/:name/:nodeId/:artifactName', 'outputs'],
    ['/input-artifacts/:namespace/:name/:nodeId/:artifactName', 'inputs'],
  ];
  for (const [path, side] of paths) {
    app.get(path, async (req: FastifyRequest<{ Params: Params }>, reply: FastifyReply) => {
      const { namespace, name, nodeId, artifactName } = req.params;
      return sendArtifact(reply, await openNodeArtifact(kube.as(req.caller.identity), namespace, name, nodeId, artifactName, trust, side));
    });
  }
  app.get(
    '/api/v1/workflows/:namespace/:name/input-artifacts/:nodeId',
    async (req: FastifyRequest<{ Params: Omit<Params, 'artifactName'> }>) => {
      const { namespace, name, nodeId } = req.params;
      return { artifacts: await describeInputArtifacts(kube.as(req.caller.identity), namespace, name, nodeId, trust) };
    },
  );
}

/** Streams an opened artifact as a download named after it (also for archived workflows). */
export function sendArtifact(reply: FastifyReply, obj: OpenedArtifact): FastifyReply {
  reply.raw.on('close', () => obj.close());
  reply.header('content-type', obj.fileName.endsWith('.tgz') ? 'application/gzip' : 'application/octet-stream');
  reply.header('content-disposition', `attachment; filename="${obj.fileName.replace(/["\\\r\n]/g, '_')}"`);
  if (obj.size !== undefined) reply.header('content-length', String(obj.size));
  return reply.send(obj.body);
}
