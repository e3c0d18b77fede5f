/**
 * A real, local Kubernetes control plane — etcd, kube-apiserver and kube-controller-manager —
 * for tests and `plugflow dev`, in the spirit of controller-runtime's envtest. The binaries are
 * built from the Go module proxy by hack/build-control-plane.sh into a cache outside the repo.
 *
 * Everything listens on loopback on free ports. RBAC is on; callers authenticate with static
 * bearer tokens (an admin in system:masters plus named test users without any rights), and
 * service-account tokens are signed with a key generated per run, so TokenRequest and the
 * service-account controllers behave as in a real cluster. The controller manager runs the
 * garbage collector (ownerReferences), namespace deletion and the service-account controllers.
 *
 * Its processes die with the process that started it (a parent-death signal where setpriv
 * supports it, a kill on exit otherwise), and its directory records who owns it, so a run
 * that was killed leaves nothing running and the next start in that directory, or the next
 * test run or `plugflow dev`, cleans up what is left (leftovers.ts).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { createWriteStream, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'undici';
import { tokenKubeconfig } from '../kube/kubeconfig.js';
import { dieWithParent, killOnExit } from '../runner/parent-death.js';
import { describeReaped, reapDir, recordProcess, removeOwnerFile, writeOwnerFile, type RecordedProcess } from './leftovers.js';

/** Test users that exist in every control plane; they start with no rights at all. */
export const TEST_USERS = ['alice', 'bob', 'carol', 'dave', 'erin'] as const;

export interface ControlPlaneOptions {
  /** Directory for data, certificates, logs and kubeconfig; a fresh temp dir by default. */
  dir?: string;
  /** Directory holding etcd, kube-apiserver and kube-controller-manager; built when absent. */
  binDir?: string;
  /** Progress lines (build steps, start-up); silent by default. */
  log?: (line: string) => void;
  /** Extra kube-apiserver flags (e.g. an audit log for bench/peer-bench.ts). */
  apiServerArgs?: string[];
}

interface Proc {
  name: string;
  args: string[];
  child?: ChildProcess;
}

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Runs hack/build-control-plane.sh (a no-op when the cache is warm) and returns the bin dir. */
export async function ensureControlPlaneBinaries(log: (line: string) => void = () => {}): Promise<string> {
  const script = join(REPO_ROOT, 'hack', 'build-control-plane.sh');
  return new Promise((resolvePromise, reject) => {
    const child = spawn('bash', [script, '--print'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
      for (const line of d.toString().split('\n')) if (line.trim()) log(line);
    });
    child.on('error', reject);
    // 'close': after the output was read (on 'exit' the last line, the answer, may still be in the pipe).
    child.on('close', (code) => {
      if (code === 0) resolvePromise(out.trim().split('\n').pop() as string);
      else reject(new Error(`building the control plane failed (exit ${code}):\n${err.slice(-4000)}`));
    });
  });
}

/** Asks the kernel for a free TCP port on loopback. */
export async function freePort(): Promise<number> {
  return new Promise((resolvePromise, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === 'object' && addr ? resolvePromise(addr.port) : reject(new Error('no port'))));
    });
  });
}

export class ControlPlane {
  readonly dir: string;
  readonly adminToken = randomBytes(24).toString('hex');
  /** Bearer tokens of the named test users. */
  readonly userTokens: Record<string, string> = {};
  apiServerUrl = '';
  kubeconfigPath = '';
  private binDir?: string;
  private readonly log: (line: string) => void;
  private readonly apiServerArgs: string[];
  private readonly procs: Proc[] = [];
  private readonly ownsDir: boolean;
  private stopping = false;
  private tls?: Agent;

  constructor(opts: ControlPlaneOptions = {}) {
    this.ownsDir = !opts.dir;
    this.dir = opts.dir ?? mkdtempSync(join(tmpdir(), 'plugflow-cp-'));
    this.binDir = opts.binDir;
    this.log = opts.log ?? (() => {});
    this.apiServerArgs = opts.apiServerArgs ?? [];
    for (const u of TEST_USERS) this.userTokens[u] = randomBytes(16).toString('hex');
  }

  /** Builds (or reuses) the binaries, starts etcd, the API server and the controller manager. */
  async start(): Promise<void> {
    this.binDir ??= await ensureControlPlaneBinaries(this.log);
    const previous = await reapDir(this.dir);
    if (previous.state === 'live')
      throw new Error(`${this.dir} is in use by a running control plane (pid ${previous.owner.pid}); stop it or use another directory`);
    if (previous.state === 'stale') {
      // Its etcd data, certificates and tokens belong to a cluster that is gone.
      rmSync(this.dir, { recursive: true, force: true });
      this.log(`[control-plane] ${describeReaped(this.dir, previous, false)}; removed its data`);
    }
    mkdirSync(join(this.dir, 'certs'), { recursive: true });
    const [etcdPort, peerPort, apiPort, kcmPort] = [await freePort(), await freePort(), await freePort(), await freePort()];
    this.apiServerUrl = `https://127.0.0.1:${apiPort}`;
    this.writeCredentials();

    const etcdUrl = `http://127.0.0.1:${etcdPort}`;
    this.procs.push({
      name: 'etcd',
      args: [
        '--name=plugflow',
        `--data-dir=${join(this.dir, 'etcd')}`,
        `--listen-client-urls=${etcdUrl}`,
        `--advertise-client-urls=${etcdUrl}`,
        `--listen-peer-urls=http://127.0.0.1:${peerPort}`,
        `--initial-advertise-peer-urls=http://127.0.0.1:${peerPort}`,
        `--initial-cluster=plugflow=http://127.0.0.1:${peerPort}`,
        '--unsafe-no-fsync',
        '--log-level=warn',
      ],
    });
    this.procs.push({
      name: 'kube-apiserver',
      args: [
        `--etcd-servers=${etcdUrl}`,
        '--bind-address=127.0.0.1',
        '--advertise-address=127.0.0.1',
        `--secure-port=${apiPort}`,
        `--cert-dir=${join(this.dir, 'certs')}`,
        `--token-auth-file=${join(this.dir, 'tokens.csv')}`,
        '--authorization-mode=Node,RBAC',
        '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
        `--service-account-key-file=${join(this.dir, 'sa.pub')}`,
        `--service-account-signing-key-file=${join(this.dir, 'sa.key')}`,
        '--service-cluster-ip-range=10.0.0.0/24',
        '--endpoint-reconciler-type=none',
        '--allow-privileged=true',
        '--profiling=false',
        ...this.apiServerArgs,
      ],
    });
    this.procs.push({
      name: 'kube-controller-manager',
      args: [
        `--kubeconfig=${join(this.dir, 'kcm.kubeconfig')}`,
        `--authentication-kubeconfig=${join(this.dir, 'kcm.kubeconfig')}`,
        `--authorization-kubeconfig=${join(this.dir, 'kcm.kubeconfig')}`,
        '--controllers=garbage-collector-controller,namespace-controller,serviceaccount-controller,serviceaccount-token-controller,root-ca-certificate-publisher-controller',
        `--service-account-private-key-file=${join(this.dir, 'sa.key')}`,
        `--root-ca-file=${join(this.dir, 'certs', 'apiserver.crt')}`,
        '--leader-elect=false',
        '--bind-address=127.0.0.1',
        `--secure-port=${kcmPort}`,
        '--use-service-account-credentials=true',
        '--concurrent-gc-syncs=5',
      ],
    });

    const t0 = Date.now();
    this.spawn(this.procs[0]);
    await this.waitFor('etcd', async () => (await fetchStatus(`${etcdUrl}/health`)) === 200, 30_000);
    await this.startApiServer();
    this.writeKubeconfigs();
    this.spawn(this.procs[2]);
    this.log(
      `[control-plane] ready in ${((Date.now() - t0) / 1000).toFixed(1)}s at ${this.apiServerUrl} (kubeconfig ${this.kubeconfigPath})`,
    );
  }

  /** Stops and starts the API server again (same port, same data): for fault tests. */
  async restartApiServer(downMs = 0): Promise<void> {
    await this.kill(this.procs[1]);
    if (downMs > 0) await new Promise((r) => setTimeout(r, downMs));
    await this.startApiServer();
  }

  /** Stops every process (controller manager first, etcd last) and removes a temp dir. */
  async stop(): Promise<void> {
    this.stopping = true;
    for (const p of [...this.procs].reverse()) await this.kill(p);
    await this.tls?.close();
    removeOwnerFile(this.dir);
    if (this.ownsDir && !process.env.PLUGFLOW_KEEP_CONTROL_PLANE) rmSync(this.dir, { recursive: true, force: true });
  }

  /** Path of a component's log file (etcd, kube-apiserver, kube-controller-manager). */
  logPath(name: string): string {
    return join(this.dir, `${name}.log`);
  }

  /** A kubeconfig (YAML text) that authenticates with the given bearer token. */
  kubeconfigYaml(token: string, user = 'user'): string {
    const ca = readFileSync(join(this.dir, 'certs', 'apiserver.crt')).toString('base64');
    return tokenKubeconfig(this.apiServerUrl, ca, token, user);
  }

  private async startApiServer(): Promise<void> {
    this.spawn(this.procs[1]);
    this.tls ??= new Agent({ connect: { rejectUnauthorized: false } });
    await this.waitFor(
      'kube-apiserver',
      async () => (await fetchStatus(`${this.apiServerUrl}/readyz`, this.adminToken, this.tls)) === 200,
      120_000,
    );
  }

  private writeCredentials(): void {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    writeFileSync(join(this.dir, 'sa.key'), privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
    writeFileSync(join(this.dir, 'sa.pub'), publicKey.export({ type: 'spki', format: 'pem' }));
    this.userTokens['system:kube-controller-manager'] = randomBytes(16).toString('hex');
    const rows = [`${this.adminToken},admin,admin,"system:masters"`];
    for (const [user, token] of Object.entries(this.userTokens)) rows.push(`${token},${user},${user}`);
    writeFileSync(join(this.dir, 'tokens.csv'), rows.join('\n') + '\n', { mode: 0o600 });
  }

  private writeKubeconfigs(): void {
    this.kubeconfigPath = join(this.dir, 'kubeconfig');
    writeFileSync(this.kubeconfigPath, this.kubeconfigYaml(this.adminToken, 'admin'), { mode: 0o600 });
    const kcm = this.userTokens['system:kube-controller-manager'];
    writeFileSync(join(this.dir, 'kcm.kubeconfig'), this.kubeconfigYaml(kcm, 'system:kube-controller-manager'), { mode: 0o600 });
  }

  private spawn(p: Proc): void {
    const bin = join(this.binDir as string, p.name);
    if (!existsSync(bin)) throw new Error(`${bin} is missing; run hack/build-control-plane.sh`);
    const out = createWriteStream(this.logPath(p.name), { flags: 'a' });
    const cmd = dieWithParent(bin, p.args);
    const child = spawn(cmd.file, cmd.args, { stdio: ['ignore', 'pipe', 'pipe'], detached: false });
    const forget = killOnExit(child.pid);
    child.stdout?.pipe(out);
    child.stderr?.pipe(out);
    child.on('exit', (code, signal) => {
      forget();
      if (p.child === child) p.child = undefined;
      if (!this.stopping && code !== null && code !== 0)
        this.log(`[control-plane] ${p.name} exited with ${code ?? signal}; see ${this.logPath(p.name)}`);
    });
    p.child = child;
    this.recordChildren();
  }

  /** The owner file: what a later run kills if this one is killed before it stops. */
  private recordChildren(): void {
    const children: RecordedProcess[] = this.procs.filter((p) => p.child?.pid).map((p) => recordProcess(p.name, p.child!.pid!));
    writeOwnerFile(this.dir, children);
  }

  private async kill(p: Proc): Promise<void> {
    const child = p.child;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
    p.child = undefined;
  }

  private async waitFor(name: string, ready: () => Promise<boolean>, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    const proc = this.procs.find((p) => p.name === name);
    while (Date.now() < deadline) {
      if (proc && !proc.child) {
        const tail = readFileSync(this.logPath(name), 'utf8').split('\n').slice(-20).join('\n');
        throw new Error(`${name} exited during start-up; last lines of ${this.logPath(name)}:\n${tail}`);
      }
      if (await ready().catch(() => false)) return;
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error(`${name} was not ready within ${timeoutMs / 1000}s; see ${this.logPath(name)}`);
  }
}

async function fetchStatus(url: string, token?: string, dispatcher?: Agent): Promise<number> {
  const res = await request(url, {
    headers: token ? { authorization: `Bearer ${token}` } : {},
    dispatcher,
    headersTimeout: 2000,
    bodyTimeout: 2000,
  });
  await res.body.dump();
  return res.statusCode;
}
