/**
 * `plugflow dev`: the whole system on this machine — a local control plane (or the cluster of
 * --kubeconfig/--context), CRDs and RBAC, the pod runner, the controller and the server — then
 * the sample workflows, each followed to its end and shown as a tree. Keeps running until
 * Ctrl-C unless --exit is given.
 */
import type { Command } from 'commander';
import { FINAL_WORKFLOW_PHASES, type Workflow } from '../api/index.js';
import { startDevStack } from '../devenv/dev-stack.js';
import { forRegistrylessNode } from '../devenv/node-cluster.js';
import { INSTALL_NAMESPACE, startNodeDev } from '../devenv/node-dev.js';
import { kubeBackend } from './kube-backend.js';
import { readWorkflowFile } from './rest.js';
import { renderTree } from './tree.js';
import { join } from 'node:path';
import { serveUntilStopped } from './serve-until-stopped.js';

interface DevFlags {
  kubeconfig?: string;
  context?: string;
  dir?: string;
  plugins: boolean;
  plugin: string[];
  submit: string[];
  port: string;
  secure: boolean;
  exit?: boolean;
  timeout: string;
  node: string;
  events: string;
  eventBus?: boolean;
  archive: boolean;
}

async function runSample(
  stack: { kubeconfigPath: string },
  file: string,
  timeoutMs: number,
  say: (l: string) => void,
  prepare: (wf: Workflow) => Workflow = (wf) => wf,
): Promise<boolean> {
  const backend = kubeBackend({ kubeconfig: stack.kubeconfigPath });
  let ok = true;
  for (const wf of readWorkflowFile(file).map(prepare)) {
    const ns = wf.metadata?.namespace ?? 'default';
    const created = await backend.create(ns, wf, false);
    const name = created.metadata.name!;
    say(`submitted ${file} as ${ns}/${name}; waiting for it to finish…`);
    const deadline = Date.now() + timeoutMs;
    let last: Workflow = created;
    while (Date.now() < deadline) {
      last = await backend.get(ns, name);
      if (last.status?.phase && FINAL_WORKFLOW_PHASES.includes(last.status.phase)) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    console.log(`\n${renderTree(last)}\n`);
    if (last.status?.phase !== 'Succeeded') ok = false;
  }
  return ok;
}

export async function runDev(flags: DevFlags): Promise<number> {
  const say = (line: string) => console.log(`[dev] ${line}`);
  if (flags.eventBus) flags.events = 'jetstream';
  if (flags.events !== 'embedded' && flags.events !== 'jetstream')
    throw new Error(`--events=${flags.events}: use embedded (the default: no bus, 200 once the workflows exist) or jetstream`);
  if (flags.node === 'kubelet' && flags.events !== 'embedded')
    throw new Error(
      '--events=jetstream is for the local pod runner (--node=local); on a real node install the overlay manifests/event-bus/',
    );
  if (flags.node === 'kubelet') return runNodeDev(flags, say);
  if (flags.node !== 'local')
    throw new Error(`--node=${flags.node}: use local (the default: the local pod runner) or kubelet (a real node; root)`);
  say('pods run on the local pod runner (the default; --node=kubelet runs them on a real node)');
  const t0 = Date.now();
  const stack = await startDevStack({
    kubeconfig: flags.kubeconfig,
    context: flags.context,
    dir: flags.dir,
    plugins: flags.plugins,
    pluginConfigMaps: flags.plugin,
    serverPort: Number(flags.port),
    secure: flags.secure,
    events: flags.events,
    archive: flags.archive,
    progress: say,
  });
  say(`up in ${((Date.now() - t0) / 1000).toFixed(1)}s`);
  return serveUntilStopped({
    flags,
    say,
    stopping: 'stopping…',
    stop: () => stack.stop(),
    banner: [
      `  export KUBECONFIG=${stack.kubeconfigPath}`,
      `  kubectl get workflows -A        # short name: wf`,
      `  server:  ${stack.server.url}   (auth mode client: send "Authorization: Bearer <token>")`,
      ...(stack.adminToken ? [`  export PLUGFLOW_SERVER=${stack.server.url} PLUGFLOW_TOKEN=${stack.adminToken}`] : []),
      `  web UI:  ${stack.server.url}/   (log in with the token above; the certificate is self-signed)`,
      `  node bin/plugflow.js submit examples/workflows/dag-diamond.yaml --wait`,
      `  controller metrics: http://127.0.0.1:${stack.controller.metricsPort}/metrics`,
      ...(stack.runner ? [`  pod logs: ${stack.runner.dir}`] : []),
      ...(stack.postgres
        ? [`  archive: PostgreSQL at ${stack.postgres.url.replace(/:[^:@/]+@/, ':***@')}   plugflow archive list -n default`]
        : []),
      ...(stack.nats
        ? [
            `  event bus: NATS JetStream, 3 nodes: ${stack.nats.servers.join(',')}  (events answered 200 are stored there, replicated)`,
            `             TLS (CA ${join(stack.dir, 'nats', 'ca.pem')}) and user ${stack.nats.connection.credentials.user} only; its password is in no file`,
          ]
        : []),
    ],
    sample: (file) => runSample(stack, file, Number(flags.timeout) * 1000, say),
  });
}

/**
 * --node=kubelet: a real node, plugflow installed on it with kubectl (src/devenv/node-dev.ts), the
 * sample workflows, then — unless --exit — running until Ctrl-C; stopping restores the host.
 */
async function runNodeDev(flags: DevFlags, say: (line: string) => void): Promise<number> {
  say('pods run on three real nodes: a containerd and kubelet each, one kube-proxy (--node=kubelet; hack/node/)');
  if (flags.archive)
    say('the workflow archive is not started on a real node: give the install a plugflow-archive Secret (README, Archive)');
  const t0 = Date.now();
  const node = await startNodeDev({
    plugins: flags.plugins,
    pluginConfigMaps: flags.plugin,
    workflowNamespaces: ['default'],
    progress: say,
  });
  say(`up in ${((Date.now() - t0) / 1000).toFixed(1)}s`);
  const prepare = (wf: Workflow) => forRegistrylessNode(wf as unknown as Record<string, unknown>) as unknown as Workflow;
  return serveUntilStopped({
    flags,
    say,
    stopping: 'stopping the node (hack/node/down.sh)…',
    stop: () => node.stop(),
    banner: [
      `  export KUBECONFIG=${node.kubeconfig}`,
      `  kubectl -n ${INSTALL_NAMESPACE} get deploy,pods -o wide`,
      `  kubectl get workflows -A        # short name: wf`,
    ],
    sample: (file) => runSample({ kubeconfigPath: node.kubeconfig }, file, Number(flags.timeout) * 1000, say, prepare),
  });
}

const collect = (v: string, prev: string[]) => [...prev, v];

export function registerDevCommands(program: Command): void {
  program
    .command('dev')
    .description('run control plane, controller, server and pod runner locally, then the sample workflows')
    .option('--kubeconfig <path>', 'use this cluster instead of a local control plane')
    .option('--context <name>', 'kubeconfig context (with --kubeconfig, or of $KUBECONFIG)')
    .option('--dir <dir>', 'working directory (control plane data, pod logs); default .plugflow/dev-<time>')
    .option('--no-plugins', 'run the controller with executor plugins off (WORKFLOW_EXECUTOR_PLUGINS unset)')
    .option('--plugin <configmap.yaml>', 'install a plugin ConfigMap (from `plugflow plugin build`) first (repeatable)', collect, [])
    .option('--submit <file>', 'submit this workflow file and follow it to its end (repeatable)', collect, [])
    .option('--port <port>', 'server port', '2746')
    .option('--no-secure', 'serve plain HTTP instead of HTTPS with a generated certificate')
    .option('--exit', 'stop once the submitted workflows finished (exit code 1 unless all Succeeded)')
    .option('--timeout <seconds>', 'longest wait for each submitted workflow', '300')
    .option('--no-archive', 'do not start PostgreSQL nor keep finished workflows in the archive')
    .option(
      '--events <mode>',
      'embedded (default: 200 once the workflows exist) or jetstream (a local three-node NATS JetStream cluster as the event bus)',
      'embedded',
    )
    .option('--event-bus', 'the same as --events=jetstream: a local three-node NATS JetStream cluster (TLS, a password) as the event bus')
    .option(
      '--node <kind>',
      'where pods run: local (the local pod runner) or kubelet (a real node with plugflow installed by kubectl; root)',
      'local',
    )
    .action(async (flags: DevFlags) => {
      if (flags.context && !flags.kubeconfig)
        flags.kubeconfig = process.env.KUBECONFIG?.split(':')[0] ?? `${process.env.HOME}/.kube/config`;
      process.exitCode = await runDev(flags);
    });
}
