/**
 * A store server the test harness and `plugflow dev` run as a child process (MinIO, Azurite):
 * started so it dies with this process even when that is SIGKILLed, polled until it answers, its
 * last output kept for the error when it does not, stopped with SIGTERM (then SIGKILL).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { dieWithParent, killOnExit } from '../runner/parent-death.js';

export interface ServerProcess {
  stop(): Promise<void>;
  /** SIGKILL, as a crash or a lost node would end it (chaos tests); resolves once it is gone. */
  kill(): Promise<void>;
}

export interface ServerProcessOptions {
  /** For messages: `MinIO`, `Azurite`. */
  name: string;
  file: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  /** Whether it is ready (a refused connection counts as not yet). */
  ready(): Promise<boolean>;
  /** Run as this user (root only: PostgreSQL refuses to run as root). */
  runAs?: string;
  timeoutMs?: number;
}

export async function startServerProcess(opts: ServerProcessOptions): Promise<ServerProcess> {
  // setpriv changes the user first and sets the parent-death signal after it (a change of user
  // would clear it), so both go in one setpriv.
  const cmd = opts.runAs
    ? {
        file: 'setpriv',
        args: [`--reuid=${opts.runAs}`, `--regid=${opts.runAs}`, '--init-groups', '--pdeathsig', 'SIGKILL', '--', opts.file, ...opts.args],
      }
    : dieWithParent(opts.file, opts.args);
  const child: ChildProcess = spawn(cmd.file, cmd.args, { env: opts.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const keep = (d: Buffer) => {
    output = (output + d.toString()).slice(-4000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  let exited: number | null | undefined;
  const forget = killOnExit(child.pid);
  child.on('exit', (code) => {
    exited = code;
    forget();
  });
  const timeoutMs = opts.timeoutMs ?? 60_000;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (exited !== undefined) throw new Error(`${opts.name} exited (code ${exited}) before it was ready:\n${output}`);
    if (await opts.ready().catch(() => false)) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${opts.name} did not become ready within ${timeoutMs / 1000} s:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    stop: async () => {
      if (exited !== undefined) return;
      const gone = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await gone;
      clearTimeout(timer);
    },
    kill: async () => {
      if (exited !== undefined) return;
      const gone = new Promise((r) => child.once('exit', r));
      child.kill('SIGKILL');
      await gone;
    },
  };
}

/**
 * Runs `bash SCRIPT [ARG…] --print` (a hack/ script that builds or installs into the cache) and
 * returns the path it prints.
 */
export function toolPath(script: string[], what: string, log: (line: string) => void): Promise<string> {
  return new Promise((resolvePath, reject) => {
    const child = execFile('bash', [...script, '--print'], { maxBuffer: 1 << 20 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${what} with ${script.join(' ')} failed: ${stderr.trim().slice(-2000) || err.message}`));
      else resolvePath(stdout.trim().split('\n').pop() as string);
    });
    child.stderr?.on('data', (d: Buffer) => {
      for (const line of d.toString().split('\n')) if (line.trim()) log(line);
    });
  });
}
