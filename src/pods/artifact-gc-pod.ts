/**
 * The pod that deletes a workflow's stored artifacts (src/engine/artifact-gc.ts decides which):
 * one plugflow container running `plugflow executor gc` with the locations and, as environment
 * from the Secrets the artifacts name, their credentials. It runs as `spec.artifactGC`'s service
 * account with its podMetadata, mounts no token (it makes no API call), and is owned by the
 * workflow. Pure, like the step pod builder.
 */
import type { V1EnvVar, V1Pod } from '@kubernetes/client-node';
import { API_VERSION, LABEL_COMPONENT, LABEL_PREFIX, type Artifact, type Workflow } from '../api/index.js';
import { gcPlan } from '../artifacts/plan.js';
import type { GCStrategy } from '../engine/index.js';
import { podNameFor } from '../engine/index.js';
import { ENV_GC_ARTIFACTS } from './layout.js';
import { escapeVars } from './expand-vars.js';
import type { ArtifactDriver } from '../artifacts/drivers.js';
import { withArtifactDrivers } from './artifact-drivers.js';

export const COMPONENT_ARTIFACT_GC = 'artifact-gc';
/** Label naming the workflow an artifact GC pod works for (not LABEL_WORKFLOW: it is no step). */
export const LABEL_ARTIFACT_GC_WORKFLOW = `${LABEL_PREFIX}artifact-gc-workflow`;

export function artifactGCPodName(workflowName: string, strategy: GCStrategy): string {
  return podNameFor(workflowName, `artifact-gc/${strategy}`, strategy === 'OnWorkflowCompletion' ? 'artgc-wfcomp' : 'artgc-wfdel');
}

export function buildArtifactGCPod(
  workflow: Workflow,
  strategy: GCStrategy,
  artifacts: readonly Artifact[],
  image: string,
  gcsEndpoint?: string,
  drivers: readonly ArtifactDriver[] = [],
): V1Pod {
  const name = workflow.metadata.name!;
  const gc = workflow.spec.artifactGC ?? {};
  const { stores, secrets } = gcPlan(artifacts, gcsEndpoint, drivers);
  // Artifacts of driver plugins are deleted by their drivers, run beside the gc container.
  const used = [...new Set(stores.flatMap((s) => ('kind' in s && s.kind === 'plugin' ? [s.name] : [])))];
  const env: V1EnvVar[] = [
    { name: ENV_GC_ARTIFACTS, value: escapeVars(JSON.stringify(stores)) },
    ...secrets.map((s) => ({ name: s.env, valueFrom: { secretKeyRef: { name: s.ref.name, key: s.ref.key } } })),
  ];
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: artifactGCPodName(name, strategy),
      namespace: workflow.metadata.namespace,
      labels: { ...gc.podMetadata?.labels, [LABEL_ARTIFACT_GC_WORKFLOW]: name, [LABEL_COMPONENT]: COMPONENT_ARTIFACT_GC },
      annotations: { ...gc.podMetadata?.annotations, [`${LABEL_PREFIX}artifact-gc-strategy`]: strategy },
      ownerReferences: [{ apiVersion: API_VERSION, kind: 'Workflow', name, uid: workflow.metadata.uid!, blockOwnerDeletion: false }],
    },
    spec: withArtifactDrivers(
      {
        restartPolicy: 'Never',
        ...(gc.serviceAccountName ? { serviceAccountName: gc.serviceAccountName } : {}),
        automountServiceAccountToken: false,
        containers: [
          {
            name: 'gc',
            image,
            command: ['plugflow', 'executor', 'gc'],
            env,
            terminationMessagePolicy: 'FallbackToLogsOnError',
            securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
          },
        ],
      },
      used,
      drivers,
      `workflow ${name}: artifact GC`,
      ['gc'],
    ),
  };
}
