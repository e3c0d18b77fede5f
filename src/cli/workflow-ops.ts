/**
 * `plugflow logs NAME [-f]` and `plugflow resume NAME`: operations on a running workflow that
 * go straight to Kubernetes with the user's kubeconfig.
 *
 * logs: the `main` container of every step pod of the workflow, oldest first, each line
 * prefixed with the step's name, through the pods/log API (a kubelet, or the local runner,
 * serves it). resume: marks waiting suspend nodes Succeeded in the workflow's status (through
 * the status subresource, with the resourceVersion, retried on conflict) and clears
 * spec.suspend; the controller carries on from there.
 */
import { CoreV1Api, CustomObjectsApi, Log, PatchStrategy, setHeaderOptions, type V1Pod } from '@kubernetes/client-node';
import type { Command } from 'commander';
import { Writable } from 'node:stream';
import { GROUP, LABEL_COMPONENT, LABEL_WORKFLOW, PLURAL, VERSION, type Workflow } from '../api/index.js';
import { resumeWorkflow } from '../engine/resume.js';
import { describeError } from '../kube/apply.js';
import { loadKubeConfig } from './kube-backend.js';

interface OpsFlags {
  kubeconfig?: string;
  context?: string;
  namespace?: string;
}

/** Prefixes each complete line written to it; keeps a partial last line until more arrives. */
class PrefixedLines extends Writable {
  private rest = '';
  constructor(private readonly prefix: string, private readonly out: (line: string) => void) {
    super();
  }
  override _write(chunk: Buffer, _enc: string, cb: () => void): void {
    const lines = (this.rest + chunk.toString()).split('\n');
    this.rest = lines.pop() ?? '';
    for (const l of lines) this.out(`${this.prefix}${l}`);
    cb();
  }
  override _final(cb: () => void): void {
    if (this.rest) this.out(`${this.prefix}${this.rest}`);
    cb();
  }
}

function stepPods(pods: V1Pod[]): V1Pod[] {
  return pods
    .filter((p) => p.metadata?.labels?.[LABEL_COMPONENT] !== 'agent')
    .sort((a, b) => String(a.metadata?.creationTimestamp ?? '').localeCompare(String(b.metadata?.creationTimestamp ?? '')));
}

export async function runLogs(name: string, flags: OpsFlags & { follow?: boolean; container?: string }, out = (l: string) => console.log(l)): Promise<number> {
  const kc = loadKubeConfig(flags.kubeconfig, flags.context);
  const namespace = flags.namespace ?? 'default';
  const core = kc.makeApiClient(CoreV1Api);
  const list = await core.listNamespacedPod({ namespace, labelSelector: `${LABEL_WORKFLOW}=${name}` }).catch((err: unknown) => {
    throw new Error(`listing the pods of workflow ${namespace}/${name}: ${describeError(err)}`);
  });
  const pods = stepPods(list.items);
  if (pods.length === 0) {
    out(`workflow ${namespace}/${name} has no step pods (yet)`);
    return 0;
  }
  const width = Math.max(...pods.map((p) => p.metadata!.name!.length));
  const logs = new Log(kc);
  const streams = pods.map(async (pod) => {
    const podName = pod.metadata!.name!;
    const prefix = `${podName.padEnd(width)} | `;
    const sink = new PrefixedLines(prefix, out);
    await new Promise<void>((resolve) => {
      // client-node 1.x pipes the response body into the sink (ending it when the log ends) and
      // never calls a `done` callback, so the end of the sink is the end of the log.
      sink.once('finish', () => resolve());
      sink.once('error', (err: unknown) => {
        out(`${prefix}(no log: ${describeError(err)})`);
        resolve();
      });
      logs
        .log(namespace, podName, flags.container ?? 'main', sink, { follow: flags.follow ?? false })
        .catch((err: unknown) => {
          out(`${prefix}(no log: ${describeError(err)})`);
          resolve();
        });
    });
  });
  if (flags.follow) await Promise.all(streams);
  else for (const s of streams) await s;
  return 0;
}

export async function runResume(name: string, flags: OpsFlags & { node?: string; parameter?: string[] }, out = (l: string) => console.log(l)): Promise<number> {
  const kc = loadKubeConfig(flags.kubeconfig, flags.context);
  const namespace = flags.namespace ?? 'default';
  const api = kc.makeApiClient(CustomObjectsApi);
  const base = { group: GROUP, version: VERSION, namespace, plural: PLURAL.workflow, name };
  const parameters: Record<string, string> = {};
  for (const p of flags.parameter ?? []) {
    const eq = p.indexOf('=');
    if (eq <= 0) throw new Error(`-p expects name=value, got "${p}"`);
    parameters[p.slice(0, eq)] = p.slice(eq + 1);
  }
  for (let attempt = 0; ; attempt++) {
    const wf = (await api.getNamespacedCustomObject(base).catch((err: unknown) => {
      throw new Error(`reading Workflow ${namespace}/${name}: ${describeError(err)}`);
    })) as Workflow;
    const { status, resumed } = resumeWorkflow(wf.status, { now: new Date().toISOString(), node: flags.node, parameters });
    if (resumed.length === 0 && !wf.spec?.suspend) {
      out(`Workflow ${namespace}/${name}: nothing is waiting to be resumed`);
      return 1;
    }
    try {
      if (resumed.length > 0) await api.replaceNamespacedCustomObjectStatus({ ...base, body: { ...wf, status } });
      if (wf.spec?.suspend) {
        await api.patchNamespacedCustomObject({ ...base, body: { spec: { suspend: null } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
      }
      out(`Workflow ${namespace}/${name} resumed${resumed.length ? `: ${resumed.join(', ')}` : ''}`);
      return 0;
    } catch (err) {
      if ((err as { code?: number }).code === 409 && attempt < 5) continue;
      throw new Error(`resuming Workflow ${namespace}/${name}: ${describeError(err)}`);
    }
  }
}

const collect = (v: string, prev: string[]) => [...prev, v];
const done = (code: number) => {
  process.exitCode = code;
};

export function registerWorkflowOpsCommands(program: Command): void {
  program
    .command('logs <name>')
    .description("print the logs of a workflow's step pods (main containers), oldest first")
    .option('-f, --follow', 'keep streaming until the pods finish')
    .option('-c, --container <name>', 'another container than main (e.g. wait)')
    .option('-n, --namespace <ns>', 'namespace', 'default')
    .option('--kubeconfig <path>', 'kubeconfig (default: $KUBECONFIG or ~/.kube/config)')
    .option('--context <name>', 'kubeconfig context')
    .action(async (name: string, flags) => done(await runLogs(name, flags)));
  program
    .command('resume <name>')
    .description('resume a suspended workflow (all waiting suspend steps, or one with --node)')
    .option('--node <name>', 'resume only the suspend step with this name or display name')
    .option('-p, --parameter <name=value>', 'value of an output parameter declared with valueFrom.supplied (repeatable)', collect, [])
    .option('-n, --namespace <ns>', 'namespace', 'default')
    .option('--kubeconfig <path>', 'kubeconfig (default: $KUBECONFIG or ~/.kube/config)')
    .option('--context <name>', 'kubeconfig context')
    .action(async (name: string, flags) => done(await runResume(name, flags)));
}
