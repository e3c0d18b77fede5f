/**
 * Runs the peer's adapted examples on a `plugflow dev` stack of its own (hack/peer-examples.ts)
 * the way the peer's own example test does: every file's ConfigMaps, PersistentVolumeClaims,
 * WorkflowTemplates and ClusterWorkflowTemplates are applied first, then every workflow not
 * labelled `no-test` (the peer's own mark for examples its test environment cannot run, with the
 * reason) is created as `kubectl create` would and must Succeed. What that environment provides is
 * set up first: the steps' account may patch pods and make what the resource examples make (the
 * peer's quick-start binds such roles to `default`), the artifact credentials the examples name
 * exist (`my-minio-cred`, the stack's MinIO) and its repository has the key `my-key` too, and the
 * entrypoints of the images the examples run without a command are listed (ConfigMap
 * plugflow-images: no registry is reachable here).
 */
import { chmodSync, copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_INSTALL_NAMESPACE, type Workflow } from '../../src/api/index.js';
import { startDevStack } from '../../src/devenv/dev-stack.js';
import { KubeClient } from '../../src/kube/client.js';
import { isAlreadyExists } from '../../src/kube/errors.js';
import { applyObjects } from '../../src/kube/apply.js';
import { CLUSTER_ROLES, CONFIGMAPS, ROLE_BINDINGS, SECRETS, WORKFLOWS } from '../../src/kube/resource.js';
import { errorMessage } from '../../src/log/error-message.js';
import { createLogger } from '../../src/log/logger.js';
import { readYamlDocuments } from '../../src/yaml/kube-yaml.js';

export interface ExampleOutcome {
  name: string;
  /** The workflow's final phase, `Refused` (the create failed), `Timeout`, or `Unreadable`. */
  phase: string;
  message?: string;
}

const NS = 'default';
const APPLIED = new Set(['ConfigMap', 'PersistentVolumeClaim', 'WorkflowTemplate', 'ClusterWorkflowTemplate']);
const FINAL = new Set(['Succeeded', 'Failed', 'Error']);

/**
 * Entrypoints of images the examples run without a command (what their registries would say);
 * argosay's points at a stand-in for the peer's test image (argosay.sh), copied where every user
 * may run it.
 */
const images = (argosay: string) => `
busybox:
  cmd: [sh]
alpine:3.23:
  cmd: [/bin/sh]
alpine:
  cmd: [/bin/sh]
python:alpine3.23:
  cmd: [python3]
debian:
  cmd: [bash]
debian:latest:
  cmd: [bash]
ubuntu:
  cmd: [bash]
argoproj/argosay:v2:
  entrypoint: [${JSON.stringify(argosay)}]
docker/whalesay:latest:
  cmd: [/bin/bash]
`;

type Doc = {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; generateName?: string; namespace?: string; labels?: Record<string, string> };
};

export async function runPeerExamples(
  files: { name: string; path: string }[],
  o: { timeoutMs: number; parallel: number; say: (l: string) => void },
): Promise<ExampleOutcome[]> {
  const stack = await startDevStack({
    dir: mkdtempSync(join(tmpdir(), 'plugflow-peer-run-')),
    serverPort: 0,
    log: createLogger('peer-examples', 'warn'),
    progress: o.say,
  });
  const client = await KubeClient.fromKubeConfig(stack.adminKubeConfig);
  const argosayDir = argosayStandIn();
  try {
    await prepare(client, stack.objectStore, join(argosayDir, 'argosay'));
    const docs = new Map<string, Doc[]>();
    for (const f of files) {
      try {
        docs.set(f.name, readYamlDocuments(readFileSync(f.path, 'utf8'), f.name) as Doc[]);
      } catch (err) {
        o.say(`cannot read ${f.name}: ${errorMessage(err)}`);
      }
    }
    // Every file's objects of these kinds first (as the peer's test): a workflow of one file may use another's.
    const others = [...docs.values()].flat().filter((d) => APPLIED.has(d?.kind ?? ''));
    for (const d of others) {
      const namespace = d.kind === 'ClusterWorkflowTemplate' ? {} : { namespace: d.metadata?.namespace ?? NS };
      await applyObjects(stack.adminKubeConfig, [{ ...d, metadata: { ...d.metadata, ...namespace } } as never]).catch((err: unknown) =>
        o.say(`could not apply ${d.kind} ${d.metadata?.name ?? ''}: ${errorMessage(err)}`),
      );
    }
    // Only the files with workflows are run; the others only gave their objects.
    const queue = files.filter((f) => (docs.get(f.name) ?? []).some((d) => d?.kind === 'Workflow'));
    const out: ExampleOutcome[] = [];
    const worker = async () => {
      for (let f = queue.shift(); f; f = queue.shift()) {
        const r = await runOne(
          client,
          f.name,
          (docs.get(f.name) ?? []).filter((d) => d?.kind === 'Workflow'),
          o.timeoutMs,
        );
        o.say(`${r.phase.padEnd(9)} ${f.name}${r.message ? `: ${r.message.slice(0, 160)}` : ''}`);
        out.push(r);
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, o.parallel) }, worker));
    return out.sort((a, b) => a.name.localeCompare(b.name));
  } finally {
    await client.close();
    await stack.stop();
    rmSync(argosayDir, { recursive: true, force: true });
  }
}

async function prepare(client: KubeClient, store: { accessKey: string; secretKey: string } | undefined, argosay: string): Promise<void> {
  const exists = (err: unknown) => {
    if (!isAlreadyExists(err)) throw err;
  };
  await client
    .create(CLUSTER_ROLES, undefined, {
      metadata: { name: 'peer-examples-steps' },
      rules: [
        { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch', 'patch'] },
        { apiGroups: [''], resources: ['configmaps', 'services', 'persistentvolumeclaims'], verbs: ['*'] },
        { apiGroups: ['batch'], resources: ['jobs'], verbs: ['*'] },
        { apiGroups: ['apps'], resources: ['deployments', 'statefulsets'], verbs: ['*'] },
        { apiGroups: ['plugflow.io'], resources: ['workflows', 'workflowtemplates'], verbs: ['*'] },
      ],
    })
    .catch(exists);
  await client
    .create(ROLE_BINDINGS, NS, {
      metadata: { name: 'peer-examples-steps' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'peer-examples-steps' },
      subjects: [{ kind: 'Group', name: `system:serviceaccounts:${NS}`, apiGroup: 'rbac.authorization.k8s.io' }],
    })
    .catch(exists);
  // The quick-start's repository has a second key, my-key, which artifact-repository-ref.yaml names.
  const repos = await client.get<{ data?: Record<string, string> }>(CONFIGMAPS, NS, 'artifact-repositories');
  const first = Object.values(repos.data ?? {})[0];
  if (first && !repos.data?.['my-key']) await client.mergePatch(CONFIGMAPS, NS, 'artifact-repositories', { data: { 'my-key': first } });
  if (store)
    await client
      .create(SECRETS, NS, { metadata: { name: 'my-minio-cred' }, stringData: { accesskey: store.accessKey, secretkey: store.secretKey } })
      .catch(exists);
  await client
    .create(CONFIGMAPS, DEFAULT_INSTALL_NAMESPACE, { metadata: { name: 'plugflow-images' }, data: { images: images(argosay) } })
    .catch(exists);
}

/**
 * argosay.sh copied into a directory every user can enter (the clone may sit in a 0700 home) and
 * outside /tmp, which the local runner gives each container its own of; the directory is returned
 * (removed when the run ends).
 */
function argosayStandIn(): string {
  const dir = mkdtempSync('/var/tmp/plugflow-argosay-');
  chmodSync(dir, 0o755);
  const file = join(dir, 'argosay');
  copyFileSync(fileURLToPath(new URL('./argosay.sh', import.meta.url)), file);
  chmodSync(file, 0o755);
  return dir;
}

async function runOne(client: KubeClient, name: string, workflows: Doc[], timeoutMs: number): Promise<ExampleOutcome> {
  if (workflows.length === 0) return { name, phase: 'Unreadable', message: 'no Workflow in the file' };
  const noTest = workflows.map((w) => w.metadata?.labels?.['workflows.plugflow.io/no-test']).find((l) => l !== undefined);
  if (noTest !== undefined) return { name, phase: 'Skipped', message: `the peer's own test does not run it either (no-test: ${noTest})` };
  const phases: string[] = [];
  const messages: string[] = [];
  for (const wf of workflows) {
    let created: Workflow;
    try {
      created = await client.create<Workflow>(WORKFLOWS, NS, { ...wf, metadata: { ...wf.metadata, namespace: NS } });
    } catch (err) {
      return { name, phase: 'Refused', message: errorMessage(err) };
    }
    const end = Date.now() + timeoutMs;
    let last: Workflow | undefined;
    while (Date.now() < end) {
      last = await client.get<Workflow>(WORKFLOWS, NS, created.metadata.name!).catch(() => last);
      if (FINAL.has(last?.status?.phase ?? '')) break;
      await new Promise((r) => setTimeout(r, 1000));
    }
    const phase = last?.status?.phase ?? 'Pending';
    phases.push(FINAL.has(phase) ? phase : 'Timeout');
    if (phase !== 'Succeeded') messages.push(last?.status?.message ?? `still ${phase}`);
  }
  const worst = ['Error', 'Failed', 'Timeout'].find((p) => phases.includes(p)) ?? 'Succeeded';
  return { name, phase: worst, ...(messages.length ? { message: messages.join('; ') } : {}) };
}
