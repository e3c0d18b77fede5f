/**
 * The artifact plan of a step pod the controller is about to create (artifacts/plan.ts): inputs
 * as the engine bound them, outputs at the locations the workflow's repository gives — the
 * repository read only when an output, an input or the log needs it.
 */
import type { Artifact, Workflow } from '../api/index.js';
import type { EngineAction } from '../engine/index.js';
import { archivesLogs, isKeyOnly, keyVariables, planArtifacts, type ArtifactPlan } from '../artifacts/plan.js';
import { RepositoryError, type ArtifactRepository } from '../artifacts/repository.js';
import type { ArtifactDriver } from '../artifacts/drivers.js';
import { MAIN_LOG_FILE } from '../pods/layout.js';
import type { ArtifactRepositories } from './artifact-repositories.js';

export interface PodArtifactSettings {
  repositories?: ArtifactRepositories;
  gcsEndpoint?: string;
  gitKnownHosts?: string;
  artifactDrivers?: readonly ArtifactDriver[];
}

/** The plan, or undefined when the pod moves no artifact. Throws RepositoryError / ArtifactPlanError. */
export async function podArtifactPlan(
  wf: Workflow,
  a: Extract<EngineAction, { kind: 'createPod' }>,
  settings: PodArtifactSettings,
): Promise<ArtifactPlan | undefined> {
  const t = a.template;
  const outputs = (t.outputs?.artifacts ?? []).filter((o) => o.from === undefined && o.fromExpression === undefined);
  const logsAsked = t.archiveLocation?.archiveLogs ?? wf.spec.archiveLogs;
  // The repository is needed by outputs without a full location of their own and by an explicit
  // archiveLogs; otherwise it is read only to learn whether it archives logs, and a broken one
  // then fails nothing (it fails the steps that store artifacts in it, with its reason).
  const required =
    logsAsked === true ||
    outputs.some((o) => !hasFullLocation(o)) ||
    (t.inputs?.artifacts ?? []).some(isKeyOnly) ||
    (t.data !== undefined && dataNeedsRepository(t.data.source?.artifactPaths));
  let repository: ArtifactRepository | undefined;
  if (required) repository = await settings.repositories?.forWorkflow(wf);
  else if (logsAsked === undefined)
    repository = await settings.repositories?.forWorkflow(wf).catch((err: unknown) => {
      if (err instanceof RepositoryError) return undefined;
      throw err;
    });
  const archiveLogs = archivesLogs(t, wf.spec.archiveLogs, repository);
  if (!t.inputs?.artifacts?.length && outputs.length === 0 && !archiveLogs && !t.data) return undefined;
  const meta = wf.metadata;
  const created = meta.creationTimestamp as unknown as Date | string | undefined;
  return planArtifacts(
    t,
    repository,
    keyVariables(
      {
        name: meta.name!,
        namespace: meta.namespace!,
        uid: meta.uid!,
        ...(created ? { creationTimestamp: typeof created === 'string' ? created : created.toISOString() } : {}),
      },
      a.podName,
    ),
    {
      archiveLogs,
      logFile: MAIN_LOG_FILE,
      ...(settings.gcsEndpoint ? { gcsEndpoint: settings.gcsEndpoint } : {}),
      ...(settings.gitKnownHosts ? { gitKnownHosts: settings.gitKnownHosts } : {}),
      ...(settings.artifactDrivers ? { artifactDrivers: settings.artifactDrivers } : {}),
    },
  );
}

/** An output that says where it goes all by itself (no repository needed). */
function hasFullLocation(o: Artifact): boolean {
  return (
    !!o.http ||
    !!(o.vendorAObject?.bucket && o.vendorAObject.endpoint && o.vendorAObject.key) ||
    !!(o.vendorB?.endpoint && o.vendorB.container && o.vendorB.blob) ||
    !!(o.plugin?.name && o.plugin.key)
  );
}

/** A data template's listing takes what its own location lacks (or all of it) from the repository. */
function dataNeedsRepository(paths: Artifact | undefined): boolean {
  if (!paths || !(paths.vendorAObject || paths.vendorB || paths.vendorCObject)) return true;
  return isKeyOnly(paths);
}
