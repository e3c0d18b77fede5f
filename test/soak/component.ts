/**
 * A plugflow component (controller or server) run as a child process of the soak driver, so a
 * chaos action can SIGKILL it for real and start a fresh one, exactly as a Deployment would
 * after a crash. The CLI runs from the sources (the same choice as the runner's `plugflow`
 * shim), so a soak never runs a stale dist/.
 *
 * Each incarnation logs to its own file; `rssKiB()` reads the live process's resident memory
 * from /proc for the memory-over-time table.
 *
 * With `supervise`, an exit nobody asked for is followed by a new incarnation after a backoff
 * (1 s doubling to 10 s), as a Deployment's pod would be restarted — the controller exits on
 * purpose when it loses its leader lease (an API server outage longer than the renew
 * deadline) and relies on exactly that. Each such exit is recorded; one whose log does not end
 * with the component's designed reason (`designedExit`) is a crash.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { cliCommand, REPO_ROOT } from '../../src/runner/shim.js';

export interface ComponentSpec {
  name: string;
  /** Arguments after `plugflow`. */
  args: string[];
  env?: Record<string, string>;
  /** URL that answers 200 once the component is ready. */
  readyUrl: string;
  /** Directory for the logs of every incarnation. */
  logDir: string;
  /** Start a new incarnation when one exits on its own (like a Deployment). */
  supervise?: boolean;
  /** A log line that makes an exit designed rather than a crash (e.g. lost leadership). */
  designedExit?: RegExp;
}

export interface ExitRecord {
  incarnation: number;
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Asked for (stop()). */
  expected: boolean;
  /** Not asked for, but the component's log gives its designed reason. */
  designed: boolean;
  /** The last warning or error line of the incarnation's log. */
  reason: string;
}

export class Component {
  private child?: ChildProcess;
  readonly exits: ExitRecord[] = [];
  /**
   * The incarnations stop() was asked to end. Per process, not one flag: a killed incarnation's
   * 'close' (its pipes drained) can come after the next one started.
   */
  private readonly stopping = new WeakSet<ChildProcess>();
  /** Whether the component should be running (start() sets it, stop() clears it). */
  private wanted = false;
  private restartDelayMs = 1000;
  private restartPending = false;
  incarnation = 0;

  constructor(readonly spec: ComponentSpec) {}

  get pid(): number | undefined {
    return this.child?.exitCode === null && this.child.signalCode === null ? this.child.pid : undefined;
  }

  /** Exits nobody asked for and the log does not explain by design: crashes. */
  unexpectedExits(): ExitRecord[] {
    return this.exits.filter((e) => !e.expected && !e.designed);
  }

  /** Exits nobody asked for that the component made on purpose (then restarted by supervision). */
  designedExits(): ExitRecord[] {
    return this.exits.filter((e) => !e.expected && e.designed);
  }

  logPath(incarnation = this.incarnation): string {
    return join(this.spec.logDir, `${this.spec.name}-${incarnation}.log`);
  }

  /** Starts a new incarnation and waits until it is ready (bounded). */
  async start(timeoutMs = 120_000): Promise<void> {
    this.wanted = true;
    if (this.pid) return this.waitReady(this.child!, timeoutMs);
    this.incarnation++;
    const incarnation = this.incarnation;
    const [file, ...pre] = cliCommand('main');
    const out = createWriteStream(this.logPath(), { flags: 'a' });
    const child = spawn(file!, [...pre, ...this.spec.args], {
      cwd: REPO_ROOT,
      env: { ...process.env, ...this.spec.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.pipe(out);
    child.stderr!.pipe(out);
    // The last lines in memory: the file may not have them yet when the process is gone.
    const recent: string[] = [];
    const keep = (d: Buffer) => {
      recent.push(...d.toString().split('\n').filter(Boolean));
      if (recent.length > 40) recent.splice(0, recent.length - 40);
    };
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    child.on('close', (code, signal) => {
      const expected = this.stopping.has(child);
      const log = recent.join('\n');
      const reason = [...recent].reverse().find((l) => /"level":"(error|warn)"|Error|error/.test(l)) ?? '';
      this.exits.push({
        incarnation,
        code,
        signal,
        expected,
        designed: !expected && !!this.spec.designedExit?.test(log),
        reason: reason.slice(0, 300),
      });
      if (!expected && this.wanted && this.spec.supervise) void this.restartLater();
    });
    this.child = child;
    await this.waitReady(child, timeoutMs);
    this.restartDelayMs = 1000;
  }

  /** Supervision: a new incarnation after a backoff, again until one starts or stop() is called. */
  private async restartLater(): Promise<void> {
    if (this.restartPending) return;
    this.restartPending = true;
    try {
      for (;;) {
        await sleep(this.restartDelayMs);
        this.restartDelayMs = Math.min(10_000, this.restartDelayMs * 2);
        if (!this.wanted || this.pid) return;
        try {
          await this.start();
          return;
        } catch {
          // exited again during start-up: next backoff
        }
      }
    } finally {
      this.restartPending = false;
    }
  }

  private async waitReady(child: ChildProcess, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null) {
        throw new Error(
          `${this.spec.name} exited during start-up (${child.exitCode ?? child.signalCode}); see ${this.logPath()}:\n${tail(this.logPath())}`,
        );
      }
      if (await ok(this.spec.readyUrl)) return;
      if (Date.now() > deadline)
        throw new Error(`${this.spec.name} was not ready within ${timeoutMs / 1000}s; see ${this.logPath()}:\n${tail(this.logPath())}`);
      await sleep(250);
    }
  }

  /** Sends `signal` and waits for the process to end (SIGKILL after graceMs). */
  async stop(signal: NodeJS.Signals = 'SIGTERM', graceMs = 35_000): Promise<void> {
    this.wanted = false;
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    this.stopping.add(child);
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await exited;
    clearTimeout(timer);
  }

  /** Resident memory of the running incarnation, in KiB (undefined when not running). */
  rssKiB(): number | undefined {
    const pid = this.pid;
    if (!pid) return undefined;
    try {
      const m = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      return m ? Number(m[1]) : undefined;
    } catch {
      return undefined;
    }
  }
}

async function ok(url: string): Promise<boolean> {
  try {
    const res = await request(url, { headersTimeout: 2000, bodyTimeout: 2000 });
    await res.body.dump();
    return res.statusCode === 200;
  } catch {
    return false;
  }
}

function tail(path: string, lines = 25): string {
  try {
    return readFileSync(path, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
