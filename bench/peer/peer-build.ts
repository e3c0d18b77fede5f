/**
 * Where hack/build-peer.sh put the peer (building it first when missing): its controller, its CRDs
 * (in the Go module cache) and, for the real node, its executor's image as an OCI archive.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../../src/devenv/dev-stack.js';
import { applyAndWait, readManifests } from '../../src/kube/apply.js';
import type { KubeClient } from '../../src/kube/client.js';
import { CONFIGMAPS } from '../../src/kube/resource.js';

/** The last line `hack/build-peer.sh MODE` printed (its progress goes to this process's stderr). */
function buildPeer(mode: '--print' | '--crds' | '--exec-image'): string {
  return execFileSync('bash', [join(REPO_ROOT, 'hack', 'build-peer.sh'), mode], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  })
    .trim()
    .split('\n')
    .pop()!;
}

export function peerPaths(): { bin: string; crds: string } {
  return { bin: buildPeer('--print'), crds: buildPeer('--crds') };
}

/** The OCI archive of the peer's executor image (argoexec), for a node that cannot pull. */
export const peerExecImage = (): string => buildPeer('--exec-image');

/** The peer's version, read off the binary's path in the cache. */
export const peerVersion = (bin: string): string => bin.match(/v\d+\.\d+\.\d+/)?.[0] ?? '?';

/** The peer's documented knobs for a higher client rate and no wait after each update. */
export const PEER_TUNED_ARGS = ['--qps', '1000', '--burst', '2000'];
export const PEER_TUNED_ENV = { INFORMER_WRITE_BACK: 'true' };

/**
 * The peer's CRDs (from `crds`, the module cache) and its configuration: metrics and telemetry
 * off (their port is fixed), in the namespace of its kubeconfig's context (none: default).
 */
export async function installPeer(admin: KubeConfig, client: KubeClient, crds: string): Promise<void> {
  await applyAndWait(
    admin,
    readdirSync(crds)
      .filter((f) => f.startsWith('argoproj.io_'))
      .flatMap((f) => readManifests(join(crds, f))),
  );
  await client.create(CONFIGMAPS, 'default', {
    metadata: { name: 'workflow-controller-configmap' },
    data: { metricsConfig: 'enabled: false\n', telemetryConfig: 'enabled: false\n' },
  });
}
