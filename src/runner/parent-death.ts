/**
 * Child processes that die with their parent. `plugflow dev`, the test harness and the pod
 * runner start long-lived children (etcd, kube-apiserver, container processes); when the
 * parent is killed (SIGKILL, OOM, a test runner's timeout) nothing else stops them, and an
 * orphaned etcd keeps its data directory and ports. Two layers:
 *
 * - a parent-death signal: the child is started through util-linux `setpriv --pdeathsig
 *   SIGKILL`, so the kernel kills it the moment its parent dies, whatever the cause. The
 *   kernel clears that setting when a process changes its user, so a container that runs as
 *   another user gets it again from the `setpriv` that changes the user (launch.ts);
 * - where setpriv is missing or too old (before 2.33), children are killed when the parent
 *   exits normally (`killOnExit`); a killed parent then leaves them behind, and the next
 *   `plugflow dev` or test run reaps them (devenv/leftovers.ts).
 */
import { spawnSync } from 'node:child_process';

let setprivPath: string | null | undefined;

/** setpriv's path when it can set a parent-death signal here, else undefined (checked once). */
export function pdeathsigTool(): string | undefined {
  if (setprivPath === undefined) {
    setprivPath = null;
    if (process.platform === 'linux') {
      const found = spawnSync('sh', ['-c', 'command -v setpriv'], { encoding: 'utf8', timeout: 5000 }).stdout?.trim();
      if (found && spawnSync(found, ['--pdeathsig', 'SIGKILL', '--', 'true'], { timeout: 5000 }).status === 0) setprivPath = found;
    }
  }
  return setprivPath ?? undefined;
}

/** The argv that runs `file args` with a parent-death SIGKILL when available. */
export function dieWithParent(
  file: string,
  args: readonly string[],
  setpriv: string | false = pdeathsigTool() ?? false,
): { file: string; args: string[] } {
  return setpriv ? { file: setpriv, args: ['--pdeathsig', 'SIGKILL', '--', file, ...args] } : { file, args: [...args] };
}

const onExit = new Map<number, boolean>();
let hooked = false;

/**
 * Kills the process (or, with `group`, its process group) with SIGKILL if this process exits
 * while it still runs. Returns the function that forgets it (call it once the child exited).
 */
export function killOnExit(pid: number | undefined, group = false): () => void {
  if (!pid || pid <= 0) return () => {};
  onExit.set(pid, group);
  if (!hooked) {
    hooked = true;
    process.on('exit', () => {
      for (const [p, g] of onExit) {
        try {
          process.kill(g ? -p : p, 'SIGKILL');
        } catch {
          // Gone already.
        }
      }
    });
  }
  return () => onExit.delete(pid);
}
