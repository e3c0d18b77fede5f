/**
 * One controller under measurement, run as its own process so that its CPU time and memory are
 * the kernel's figures (/proc/<pid>/stat utime+stime, /proc/<pid>/status VmRSS), the same way for
 * the Node.js controller and the Go one. RSS is sampled every 100 ms while it runs.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { REPO_ROOT } from '../../src/devenv/dev-stack.js';

const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/** CPU seconds (user + system) the process has used so far. */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) may contain spaces: the fields we need follow its closing ')'.
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(rest[11]) + Number(rest[12])) / CLK_TCK;
}

/** Resident set size in MiB. */
export function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

/** Samples a process's RSS every 100 ms; take() is the peak since the last take (MiB). */
export class PeakRss {
  private peak = 0;
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly pid: () => number) {
    this.timer = setInterval(() => {
      try {
        this.peak = Math.max(this.peak, rssMiB(this.pid()));
      } catch {
        /* exited: the caller reports it */
      }
    }, 100);
  }

  take(): number {
    const p = Math.max(this.peak, rssMiB(this.pid()));
    this.peak = 0;
    return p;
  }

  stop(): void {
    clearInterval(this.timer);
  }
}

export class ControllerProcess {
  private child?: ChildProcess;
  private rss?: PeakRss;

  constructor(
    readonly name: string,
    private readonly file: string,
    private readonly args: string[],
    private readonly env: Record<string, string>,
    private readonly logPath: string,
  ) {}

  get pid(): number {
    const pid = this.child?.pid;
    if (!pid || !this.running()) throw new Error(`${this.name} is not running; see ${this.logPath}`);
    return pid;
  }

  /** Not yet exited (a Go program killed by SIGTERM has no exit code, only a signal). */
  private running(): boolean {
    return !!this.child && this.child.exitCode === null && this.child.signalCode === null;
  }

  start(): void {
    // The log file itself, not a pipe to this process: writes to a pipe are synchronous in Node.js
    // and would stall the controller (and its profile) whenever this busy process reads late.
    const out = openSync(this.logPath, 'a');
    this.child = spawn(this.file, this.args, { env: { ...process.env, ...this.env }, stdio: ['ignore', out, out], cwd: REPO_ROOT });
    closeSync(out);
    this.rss = new PeakRss(() => this.pid);
  }

  /** Peak RSS since the last reset (MiB). */
  takePeak(): number {
    if (!this.rss) throw new Error(`${this.name} was not started`);
    return this.rss.take();
  }

  async stop(): Promise<void> {
    this.rss?.stop();
    const child = this.child;
    if (!child || !this.running()) return;
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    child.kill('SIGTERM');
    const t = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(t);
  }
}

/** Waits until `url` (a controller's /readyz) answers 2xx. */
export async function waitReady(url: string, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    const ok = await fetch(url).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${url} not ready within ${timeoutMs / 1000}s`);
}
