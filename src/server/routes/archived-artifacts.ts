/**
 * The artifacts and logs of archived workflows, whose pods are long gone (the peer's paths):
 *
 *   GET /artifact-files/{namespace}/archived-workflows/{uid}/{nodeId}/outputs/{artifactName}
 *   GET /artifacts-by-uid/{uid}/{nodeId}/{artifactName}          (the peer's older path of the same)
 *   GET /input-artifacts-by-uid/{uid}/{nodeId}/{artifactName}    → 400: an archived workflow's
 *       inputs are served as the outputs of the nodes they came from
 *   GET /api/v1/archived-workflows/{uid}/log?nodeId=…
 *       → server-sent events as the live log route sends them, from the node's `main-logs`
 *         artifact (saved when the workflow set archiveLogs); 404 naming that when it has none.
 *
 * As for live workflows: whoever may read the workflow's namespace and the Secrets its artifact
 * repository names may download, only from an artifact repository's store (artifact-trust.ts).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { createGunzip } from 'node:zlib';
import type { Readable } from 'node:stream';
import { extract } from 'tar-stream';
import { MAIN_LOGS_ARTIFACT, type Workflow } from '../../api/index.js';
import type { KubeClient } from '../../kube/client.js';
import { nodeArtifacts, openArtifact, OperationRefused, type ArtifactTrust } from '../../operations/index.js';
import { badRequest } from '../errors.js';
import { SseStream } from '../stream/sse.js';
import { sendLines } from './pod-logs.js';
import { sendArtifact } from './artifacts.js';
import type { Caller } from '../auth.js';

export interface ArchivedArtifactDeps {
  kube: KubeClient;
  trust: ArtifactTrust;
  /** The archived workflow, once the caller may read it (404 otherwise); `namespace` must match when given. */
  archived(caller: Caller, uid: string, namespace?: string): Promise<Workflow>;
}

type FileParams = { namespace: string; uid: string; nodeId: string; artifactName: string };

export function archivedArtifactRoutes(app: FastifyInstance, deps: ArchivedArtifactDeps): void {
  const { kube, trust } = deps;
  const open = async (caller: Caller, wf: Workflow, nodeId: string, artifact: string) => {
    const found = nodeArtifacts(wf, nodeId, artifact)[0];
    if (!found) {
      const why = artifact === MAIN_LOGS_ARTIFACT ? ' (its log is kept only when the workflow set archiveLogs)' : '';
      throw new OperationRefused(
        'not-found',
        `archived workflow ${wf.metadata.namespace}/${wf.metadata.name} has no output artifact "${artifact}" on node "${nodeId}"${why}`,
      );
    }
    return openArtifact(kube.as(caller.identity), wf, found.artifact, trust);
  };

  app.get(
    '/artifact-files/:namespace/archived-workflows/:uid/:nodeId/outputs/:artifactName',
    async (req: FastifyRequest<{ Params: FileParams }>, reply: FastifyReply) => {
      const { namespace, uid, nodeId, artifactName } = req.params;
      const wf = await deps.archived(req.caller, uid, namespace);
      return sendArtifact(reply, await open(req.caller, wf, nodeId, artifactName));
    },
  );

  app.get(
    '/artifacts-by-uid/:uid/:nodeId/:artifactName',
    async (req: FastifyRequest<{ Params: Omit<FileParams, 'namespace'> }>, reply: FastifyReply) => {
      const { uid, nodeId, artifactName } = req.params;
      const wf = await deps.archived(req.caller, uid);
      return sendArtifact(reply, await open(req.caller, wf, nodeId, artifactName));
    },
  );
  app.get('/input-artifacts-by-uid/:uid/:nodeId/:artifactName', async (req: FastifyRequest<{ Params: Omit<FileParams, 'namespace'> }>) => {
    const { uid, nodeId, artifactName } = req.params;
    await deps.archived(req.caller, uid);
    throw badRequest(
      `the input artifact "${artifactName}" of node "${nodeId}" of archived workflow ${uid} is not served by its inputs: download it as the output artifact of the node it came from (/artifacts-by-uid/${uid}/<that node>/<its name>)`,
    );
  });

  app.get(
    '/api/v1/archived-workflows/:uid/log',
    async (req: FastifyRequest<{ Params: { uid: string }; Querystring: { nodeId?: string } }>, reply: FastifyReply) => {
      const nodeId = req.query.nodeId;
      if (!nodeId) throw badRequest('nodeId is required: the node whose archived log to show');
      const wf = await deps.archived(req.caller, req.params.uid);
      const node = wf.status?.nodes?.[nodeId];
      const obj = await open(req.caller, wf, nodeId, MAIN_LOGS_ARTIFACT);
      const sse = new SseStream(req, reply);
      sse.signal.addEventListener('abort', () => obj.close());
      try {
        await sendLines(sse, logBytes(obj.body, obj.fileName), node?.podName ?? nodeId, `node ${nodeId}`);
      } finally {
        obj.close();
      }
    },
  );
}

/** The log file's bytes: the one file of a tar+gzip (the default archive), or the object itself. */
async function* logBytes(body: Readable, fileName: string): AsyncIterable<Buffer> {
  if (!fileName.endsWith('.tgz') && !fileName.endsWith('.tar.gz')) {
    yield* body as AsyncIterable<Buffer>;
    return;
  }
  const tar = extract();
  body.pipe(createGunzip()).pipe(tar);
  for await (const entry of tar) {
    if (entry.header.type === 'file') {
      yield* entry as AsyncIterable<Buffer>;
      return;
    }
    entry.resume();
  }
}
