/**
 * A real cluster of three nodes on this machine (PLUGFLOW_NODE_COUNT to change it), for `plugflow dev --node=kubelet` and test/node/: started
 * by hack/node/up.sh, stopped by hack/node/down.sh, and driven the way a person does — with
 * kubectl — so both do what the README's install section tells people to run. Where the node
 * cannot start (no root, no containerd, no images) `nodeUnavailableReason()` says why.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { readYamlDocuments } from '../yaml/kube-yaml.js';
import { REPO_ROOT } from './dev-stack.js';
import type { V1ContainerStatus, V1Pod } from '@kubernetes/client-node';
import { LABEL_WORKFLOW } from '../api/index.js';

const run = promisify(execFile);
const NODE_DIR = process.env.PLUGFLOW_NODE_DIR ?? '/tmp/plugflow-node';
const IMAGE_DIR = process.env.IMAGE_OUT ?? join(REPO_ROOT, 'out', 'image');

/** Why the node cannot run here, or undefined when it can. */
export async function nodeUnavailableReason(): Promise<string | undefined> {
  try {
    await run('bash', [join(REPO_ROOT, 'hack/node/up.sh'), '--check']);
  } catch (err) {
    const out = (err as { stdout?: string }).stdout?.trim();
    return out || String(err);
  }
  const missing = ['plugflow', 'shell', 'python'].filter((n) => !existsSync(join(IMAGE_DIR, `${n}.oci.tar`)));
  if (missing.length > 0) return `image archives missing in ${IMAGE_DIR}: ${missing.join(', ')} (make image test-images)`;
  return undefined;
}

/** Runs a script of hack/node/, its progress lines on our stderr, and fails with its exit code. */
function script(name: string, ...args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [join(REPO_ROOT, 'hack/node', name), ...args], { stdio: ['ignore', 'inherit', 'inherit'] });
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`hack/node/${name} exited with ${code}; its step logs are in ${NODE_DIR}/logs`)),
    );
  });
}

export class NodeCluster {
  kubeconfig = '';
  /** The nodes' names, node 1 first. */
  nodes: string[] = [];
  private kubectlBin = '';
  /** Each node's containerd socket, in the order of `nodes`. */
  private sockets: string[] = [];

  async start(): Promise<void> {
    await script('up.sh');
    const env = Object.fromEntries(
      readFileSync(join(NODE_DIR, 'env'), 'utf8')
        .split('\n')
        .filter((l) => l.includes('='))
        .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
    );
    this.kubeconfig = env.KUBECONFIG;
    this.kubectlBin = env.KUBECTL;
    this.nodes = env.NODES.split(',');
    this.sockets = env.CONTAINERD_SOCKETS.split(',');
  }

  /**
   * Loses a node the way a machine dies (hack/node/lose.sh): its kubelet, containerd, shims and
   * pod processes killed with SIGKILL, and nothing told to the API server.
   */
  async lose(node: string): Promise<void> {
    const i = this.nodes.indexOf(node);
    if (i < 0) throw new Error(`no node named ${node}; the nodes are ${this.nodes.join(', ')}`);
    await script('lose.sh', String(i + 1));
  }

  /** Imports an OCI or docker archive into every node's containerd, named `base:<its tag>`. */
  async importImage(base: string, archive: string): Promise<void> {
    for (const sock of this.sockets) await run('ctr', ['-a', sock, '-n', 'k8s.io', 'images', 'import', '--base-name', base, archive]);
  }

  async stop(): Promise<void> {
    await script('down.sh');
  }

  /** kubectl with the node's admin kubeconfig; returns stdout, throws with stderr. */
  async kubectl(args: string[], input?: string): Promise<string> {
    return new Promise((resolve, reject) => {
      // stdin only when there is input: a kubectl that exits before reading it would otherwise
      // make the write fail with EPIPE, an uncaught error that fails the whole suite.
      const child = spawn(this.kubectlBin, ['--kubeconfig', this.kubeconfig, ...args], {
        stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      });
      let out = '';
      let err = '';
      child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
      child.on('error', reject);
      // 'close', not 'exit': the process can exit before its output has been read, and a
      // `create -o name` then seems to have printed nothing.
      child.on('close', (code) =>
        code === 0 ? resolve(out) : reject(new Error(`kubectl ${args.join(' ')} exited with ${code}: ${err.trim()}`)),
      );
      if (child.stdin) {
        // Its exit code says what went wrong; a broken pipe adds nothing.
        child.stdin.on('error', () => {});
        child.stdin.end(input);
      }
    });
  }

  /** A JSONPath of an object, '' while it does not exist. */
  async get(args: string[], jsonpath: string): Promise<string> {
    return this.kubectl(['get', ...args, '-o', `jsonpath=${jsonpath}`]).catch(() => '');
  }

  /** Polls until `check` returns a value, or fails naming what it waited for and the last value seen. */
  async waitFor<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 120_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const v = await check();
      if (v !== undefined) return v;
      if (Date.now() > deadline)
        throw new Error(`timed out after ${timeoutMs / 1000}s waiting for ${what}; the cluster then:\n${await this.snapshot()}`);
      await new Promise((r) => setTimeout(r, 500));
    }
  }

  /** The entries of a workflow's status.nodes. */
  async workflowNodes(name: string, ns: string): Promise<{ type?: string; phase?: string; message?: string; outputs?: unknown }[]> {
    const wf = JSON.parse(await this.kubectl(['get', 'workflow', name, '-n', ns, '-o', 'json'])) as {
      status?: { nodes?: Record<string, object> };
    };
    return Object.values(wf.status?.nodes ?? {});
  }

  /**
   * Each pod of a workflow that has not succeeded, with the state of every container — what a
   * node stuck Running needs to be explained ("main: terminated StartError 128; wait: running").
   */
  async podStates(workflow: string, ns: string): Promise<string[]> {
    const out = await this.kubectl(['get', 'pods', '-n', ns, '-l', `${LABEL_WORKFLOW}=${workflow}`, '-o', 'json']);
    const pods = (JSON.parse(out) as { items: V1Pod[] }).items;
    return pods.filter((p) => p.status?.phase !== 'Succeeded').map(describePod);
  }

  /**
   * The last `n` lines of the controller's log that name `workflow`, and of the node's own logs
   * (kubelet, containerd) that name `pod`: for a failure message that has to explain a stuck pod
   * from the tail of a CI log.
   */
  async logLines(workflow: string, pod: string, n = 4): Promise<string[]> {
    const pick = (name: string, text: string, needle = pod): string[] =>
      text
        .split('\n')
        .filter((l) => l.includes(needle))
        .slice(-n)
        .map((l) => `${name}: ${l.slice(0, 300)}`);
    const controller = await this.kubectl(['-n', 'plugflow', 'logs', 'deploy/plugflow-controller', '--tail=20000']).catch(() => '');
    const logs = join(NODE_DIR, 'logs');
    const node = (existsSync(logs) ? readdirSync(logs) : [])
      .filter((f) => /^(kubelet|containerd)-\d+\.log$/.test(f))
      .flatMap((f) => pick(f.slice(0, -'.log'.length), readFileSync(join(logs, f), 'utf8')));
    return [...pick('controller', controller, workflow), ...node];
  }

  /** Pods and workflows of every namespace, and recent warning events: for failure messages. */
  async snapshot(): Promise<string> {
    const parts = await Promise.all(
      [
        this.kubectl(['get', 'events', '-A', '--field-selector=type=Warning', '--sort-by=.lastTimestamp']).then((e) =>
          e.split('\n').slice(-15).join('\n'),
        ),
        this.kubectl(['get', 'pods', '-A', '-o', 'wide']),
        this.kubectl(['get', 'workflows', '-A']),
      ].map((p) => p.catch((err: Error) => err.message)),
    );
    // Workflows last: a CI log shows its tail, and they say most about what was waited for.
    return parts.join('\n').slice(-6000);
  }

  /**
   * Creates a file's documents in `ns` — other kinds first (template-ref.yaml's WorkflowTemplate),
   * then its Workflow (see forRegistrylessNode) — and returns the Workflow's generated name.
   */
  async submit(file: string, ns: string): Promise<string> {
    const docs = readYamlDocuments(readFileSync(resolve(REPO_ROOT, file), 'utf8'), file) as Record<string, unknown>[];
    for (const d of docs.filter((d) => d.kind !== 'Workflow'))
      await this.kubectl(['apply', '-n', ns, '-f', '-'], JSON.stringify(forRegistrylessNode(d)));
    const wf = docs.find((d) => d.kind === 'Workflow');
    if (!wf) throw new Error(`${file} has no Workflow`);
    return this.create(wf, ns);
  }

  /** Creates one object (see forRegistrylessNode) in `ns` and returns its (generated) name. */
  async create(obj: Record<string, unknown>, ns: string): Promise<string> {
    const out = await this.kubectl(['create', '-n', ns, '-o', 'name', '-f', '-'], JSON.stringify(forRegistrylessNode(obj)));
    const name = out.trim().split('/').pop();
    if (!name) throw new Error(`kubectl create -o name printed no name: ${JSON.stringify(out)}`);
    return name;
  }

  /** Waits for a workflow to finish; returns its phase and message. */
  async finished(name: string, ns: string, timeoutMs = 120_000): Promise<{ phase: string; message: string }> {
    return this.waitFor(
      `workflow ${ns}/${name} to finish`,
      async () => {
        const [phase, message] = (await this.get(['workflow', name, '-n', ns], '{.status.phase}{"\\t"}{.status.message}')).split('\t');
        return ['Succeeded', 'Failed', 'Error'].includes(phase) ? { phase, message: message ?? '' } : undefined;
      },
      timeoutMs,
    );
  }
}

/**
 * The node has no registry: images were imported, and an image without a tag (`busybox`) would
 * get the `Always` pull policy and fail to pull. Containers and scripts that do not choose a pull
 * policy get IfNotPresent — the only change made to the examples the suite runs.
 */
export function forRegistrylessNode(workflow: Record<string, unknown>): Record<string, unknown> {
  const copy = structuredClone(workflow);
  const templates = ((copy.spec as { templates?: unknown[] } | undefined)?.templates ?? []) as Record<
    string,
    Record<string, unknown> | undefined
  >[];
  for (const t of templates) {
    for (const key of ['container', 'script'] as const) {
      const c = t[key];
      if (c && c.imagePullPolicy === undefined) c.imagePullPolicy = 'IfNotPresent';
    }
  }
  return copy;
}

/** "name Running [init: terminated Completed 0; main: terminated StartError 128 (message); wait: running]". */
export function describePod(pod: V1Pod): string {
  const one = (s: V1ContainerStatus): string => {
    const t = s.state?.terminated;
    if (t) return `${s.name}: terminated ${t.reason ?? ''} ${t.exitCode}${t.message ? ` (${t.message.slice(0, 200)})` : ''}`;
    const w = s.state?.waiting;
    if (w) return `${s.name}: waiting ${w.reason ?? ''}${w.message ? ` (${w.message.slice(0, 200)})` : ''}`;
    return `${s.name}: ${s.state?.running ? 'running' : 'unknown'}${s.restartCount ? ` restarts ${s.restartCount}` : ''}`;
  };
  const containers = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])].map(one);
  return `${pod.metadata?.name} ${pod.status?.phase ?? '?'} [${containers.join('; ')}]`;
}
