/**
 * One container run as a local process tree. It gets its own process group (and, with
 * namespaces, its own PID namespace), so that a stop reaches every process it started.
 */
import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { constants } from 'node:os';
import { dirname } from 'node:path';
import type { Launch } from './launch.js';
import { killOnExit } from './parent-death.js';

export interface Exit {
  /** Exit code; 128+N for a signal, like container runtimes report. */
  code: number;
  signal?: number;
}

export interface ContainerProcess {
  pid: number;
  exited: Promise<Exit>;
  /** Sends a signal to the whole process group. */
  signal(sig: NodeJS.Signals): void;
  /** SIGTERM, then SIGKILL after graceMs; resolves when the process has exited. */
  stop(graceMs: number): Promise<Exit>;
}

export function startProcess(launch: Launch, env: Record<string, string>, logPath: string): ContainerProcess {
  mkdirSync(dirname(logPath), { recursive: true });
  const log = openSync(logPath, 'a');
  let child;
  try {
    child = spawn(launch.file, launch.args, { cwd: launch.cwd, env, detached: true, stdio: ['ignore', log, log] });
  } finally {
    closeSync(log);
  }
  const pid = child.pid ?? -1;
  // Where no parent-death signal is available, at least a normal exit of the runner takes them.
  const forget = killOnExit(pid, true);
  const signal = (sig: NodeJS.Signals) => {
    if (pid <= 0) return;
    try {
      process.kill(-pid, sig);
    } catch {
      // The group is gone already.
    }
  };
  const exited = new Promise<Exit>((resolve) => {
    child.once('error', (err) => {
      // Spawn failed (the file does not exist or is not executable): like a runtime's StartError.
      forget();
      resolve({ code: (err as NodeJS.ErrnoException).code === 'EACCES' ? 126 : 127 });
    });
    child.once('exit', (code, sig) => {
      // Whatever the first process left behind goes with it, as in a container.
      signal('SIGKILL');
      forget();
      if (sig) {
        const n = constants.signals[sig] ?? 0;
        resolve({ code: 128 + n, signal: n });
      } else resolve({ code: code ?? 0 });
    });
  });
  return {
    pid,
    exited,
    signal,
    async stop(graceMs: number) {
      signal('SIGTERM');
      const timer = setTimeout(() => signal('SIGKILL'), Math.max(0, graceMs));
      try {
        return await exited;
      } finally {
        clearTimeout(timer);
      }
    },
  };
}
