/**
 * The runner's Node object and its heartbeat. Like a kubelet it creates (or adopts) its Node
 * with a Ready condition, renews a Lease named after the node in kube-node-lease every 10 s,
 * and refreshes the Ready condition's heartbeat now and then. On stop it marks the node not
 * ready, so nothing mistakes a stopped runner for a live one.
 *
 * The API server taints every new node `node.kubernetes.io/not-ready:NoSchedule`, and the
 * node lifecycle controller lifts the taint once the node reports Ready. That controller does
 * not run in the development control plane, so the runner does its part for its own node:
 * it removes the taint when ready and puts it back when it stops.
 */
import type { V1Lease, V1Node, V1NodeCondition } from '@kubernetes/client-node';
import { cpus, endianness, totalmem } from 'node:os';
import type { KubeClient } from '../kube/client.js';
import { errorMessage } from '../log/error-message.js';
import { isAlreadyExists, isConflict, isNotFound } from '../kube/errors.js';
import { LEASES, NODES, apiVersionOf } from '../kube/resource.js';
import type { Logger } from '../log/logger.js';
import type { NodeResources } from './field-ref.js';
import { LOCAL_IP } from './field-ref.js';

export const LEASE_NAMESPACE = 'kube-node-lease';
const NOT_READY_TAINT = 'node.kubernetes.io/not-ready';
const UNREACHABLE_TAINT = 'node.kubernetes.io/unreachable';
const LEASE_SECONDS = 40;
const RENEW_MS = 10_000;
const STATUS_EVERY_MS = 60_000;

/**
 * Go's name for an architecture (GOARCH), which Kubernetes puts in `kubernetes.io/arch` and
 * `status.nodeInfo.architecture`: Node says x64 where Go says amd64.
 */
export function goArch(arch: string = process.arch, littleEndian = endianness() === 'LE'): string {
  const names: Record<string, string> = {
    x64: 'amd64',
    ia32: '386',
    arm: 'arm',
    arm64: 'arm64',
    s390x: 's390x',
    riscv64: 'riscv64',
    loong64: 'loong64',
    mips: 'mips',
    mipsel: 'mipsle',
    ppc: 'ppc',
  };
  if (arch === 'ppc64') return littleEndian ? 'ppc64le' : 'ppc64';
  return names[arch] ?? arch;
}

/** Go's name for an operating system (GOOS), for `kubernetes.io/os`. */
export function goOS(platform: string = process.platform): string {
  return platform === 'win32' ? 'windows' : platform;
}

/**
 * The labels a kubelet puts on its node, which common nodeSelectors and affinities name
 * (`kubernetes.io/os: linux`, the older `beta.kubernetes.io/*` forms in many charts). The
 * hostname label is the node name, as a kubelet with `--hostname-override` sets both.
 */
export function standardNodeLabels(name: string, arch: string = goArch(), os: string = goOS()): Record<string, string> {
  return {
    'kubernetes.io/hostname': name,
    'kubernetes.io/os': os,
    'kubernetes.io/arch': arch,
    'beta.kubernetes.io/os': os,
    'beta.kubernetes.io/arch': arch,
  };
}

export function localNodeResources(): NodeResources {
  return { cpu: cpus().length, memory: totalmem(), ephemeralStorage: 100 * 2 ** 30 };
}

export function nodeObject(name: string, resources: NodeResources, ready: boolean, now: string, kubeletPort?: number): V1Node {
  const capacity = {
    cpu: String(resources.cpu),
    memory: `${Math.floor(resources.memory / 1024)}Ki`,
    pods: '110',
    'ephemeral-storage': `${Math.floor(resources.ephemeralStorage / 1024)}Ki`,
  };
  const readyCondition: V1NodeCondition = {
    type: 'Ready',
    status: ready ? 'True' : 'False',
    reason: ready ? 'KubeletReady' : 'KubeletStopped',
    message: ready ? 'plugflow local pod runner is ready' : 'plugflow local pod runner stopped',
    lastHeartbeatTime: new Date(now),
    lastTransitionTime: new Date(now),
  };
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      labels: { ...standardNodeLabels(name), 'plugflow.io/local-runner': 'true' },
    },
    status: {
      capacity,
      allocatable: capacity,
      conditions: [readyCondition],
      // Only the IP: the API server reaches the kubelet endpoint by the first address type it
      // prefers, and the node name does not resolve.
      addresses: [{ type: 'InternalIP', address: LOCAL_IP }],
      ...(kubeletPort ? { daemonEndpoints: { kubeletEndpoint: { Port: kubeletPort } } } : {}),
      nodeInfo: {
        architecture: goArch(),
        operatingSystem: goOS(),
        kubeletVersion: 'plugflow-runner',
        kubeProxyVersion: '',
        containerRuntimeVersion: 'plugflow-runner://local-processes',
        kernelVersion: '',
        osImage: 'local processes',
        machineID: '',
        systemUUID: '',
        bootID: '',
      },
    },
  };
}

export class NodeHeartbeat {
  private timer?: NodeJS.Timeout;
  private lastStatus = 0;
  private node?: V1Node;

  constructor(
    private readonly client: KubeClient,
    private readonly name: string,
    private readonly resources: NodeResources,
    private readonly log: Logger,
    /** Port of the runner's log endpoint (kubelet-server.ts). */
    private readonly kubeletPort?: number,
  ) {}

  /** Creates or adopts the Node, marks it ready and starts the lease. */
  async start(): Promise<V1Node> {
    const now = new Date().toISOString();
    const desired = nodeObject(this.name, this.resources, true, now, this.kubeletPort);
    let node: V1Node;
    try {
      node = await this.client.create<V1Node>(NODES, undefined, desired);
      this.log.info('registered node', { node: this.name });
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
      node = await this.client.get<V1Node>(NODES, undefined, this.name);
      node.metadata!.labels = { ...node.metadata!.labels, ...desired.metadata!.labels };
      node = await this.client.replace<V1Node>(NODES, undefined, this.name, node);
      this.log.info('adopted existing node', { node: this.name });
    }
    this.node = await this.writeStatus(true);
    this.node = await this.setNotReadyTaint(false);
    await this.renewLease();
    this.timer = setInterval(() => void this.beat(), RENEW_MS);
    this.timer.unref();
    return this.node ?? node;
  }

  /** The node as last written (labels for scheduling decisions). */
  current(): V1Node | undefined {
    return this.node;
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.writeStatus(false).catch((err) => this.log.warn('marking the node not ready failed', { error: errorMessage(err) }));
    await this.setNotReadyTaint(true).catch((err) => this.log.warn('tainting the node not ready failed', { error: errorMessage(err) }));
  }

  /** Adds or removes the not-ready NoSchedule taint (and drops a stale unreachable one). */
  private async setNotReadyTaint(present: boolean): Promise<V1Node> {
    for (let attempt = 0; ; attempt++) {
      const node = await this.client.get<V1Node>(NODES, undefined, this.name);
      const others = (node.spec?.taints ?? []).filter((t) => t.key !== NOT_READY_TAINT && t.key !== UNREACHABLE_TAINT);
      const taints = present ? [...others, { key: NOT_READY_TAINT, effect: 'NoSchedule' }] : others;
      const before = JSON.stringify(node.spec?.taints ?? []);
      if (JSON.stringify(taints) === before) return node;
      node.spec = { ...node.spec, taints };
      try {
        return await this.client.replace<V1Node>(NODES, undefined, this.name, node);
      } catch (err) {
        if (!isConflict(err) || attempt >= 5) throw err;
      }
    }
  }

  private async beat(): Promise<void> {
    try {
      await this.renewLease();
      if (Date.now() - this.lastStatus > STATUS_EVERY_MS) {
        this.node = await this.writeStatus(true);
        this.node = await this.setNotReadyTaint(false);
      }
    } catch (err) {
      this.log.warn('node heartbeat failed; will retry', { node: this.name, error: errorMessage(err) });
    }
  }

  private async writeStatus(ready: boolean): Promise<V1Node> {
    for (let attempt = 0; ; attempt++) {
      const node = await this.client.get<V1Node>(NODES, undefined, this.name);
      node.status = { ...node.status, ...nodeObject(this.name, this.resources, ready, new Date().toISOString(), this.kubeletPort).status };
      try {
        const out = await this.client.replace<V1Node>(NODES, undefined, this.name, node, 'status');
        this.lastStatus = Date.now();
        return out;
      } catch (err) {
        if (!isConflict(err) || attempt >= 5) throw err;
      }
    }
  }

  private async renewLease(): Promise<void> {
    // Typed Date by client-node, but it goes out as JSON: the six-digit string is what the API takes.
    const now = microTime(new Date()) as unknown as Date;
    try {
      const lease = await this.client.get<V1Lease>(LEASES, LEASE_NAMESPACE, this.name);
      lease.spec = { ...lease.spec, holderIdentity: this.name, leaseDurationSeconds: LEASE_SECONDS, renewTime: now };
      await this.client.replace(LEASES, LEASE_NAMESPACE, this.name, lease);
    } catch (err) {
      if (!isNotFound(err)) throw err;
      const owner = this.node?.metadata?.uid
        ? [{ apiVersion: 'v1', kind: 'Node', name: this.name, uid: this.node.metadata.uid }]
        : undefined;
      const lease: V1Lease = {
        apiVersion: apiVersionOf(LEASES),
        kind: LEASES.kind,
        metadata: { name: this.name, namespace: LEASE_NAMESPACE, ownerReferences: owner },
        spec: { holderIdentity: this.name, leaseDurationSeconds: LEASE_SECONDS, renewTime: now },
      };
      await this.client.create(LEASES, LEASE_NAMESPACE, lease);
    }
  }
}

/**
 * A metav1.MicroTime as the API server parses it: RFC 3339 with exactly six fractional digits
 * (a Date's ISO form has three, which the server refuses for a Lease's renewTime).
 */
export function microTime(d: Date): string {
  return d.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}
