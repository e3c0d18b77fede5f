/**
 * How the runner starts one container's process: the command line it spawns.
 *
 * With mount namespaces (root, `unshare` works) the process runs under
 *   unshare --mount --pid --fork --mount-proc -- sh -c SCRIPT sh ARGV...
 * where SCRIPT bind-mounts the pod's volumes at their mountPaths, a private /tmp and the
 * termination message file, then `exec`s ARGV. The mounts exist for that process tree only.
 * The PID namespace makes the container's first process PID 1 as in a real container, and
 * killing it takes every process of the container with it.
 *
 * The runner directory is first bind-mounted at a fixed stage path, and every source under it
 * is reached through the stage: the private /tmp would otherwise hide a runner directory that
 * lives under /tmp.
 *
 * Host paths that every container needs at a fixed path (`tools.binds`: the plugflow package
 * the `plugflow` shim runs) are bind-mounted right after the stage, before the private /tmp,
 * so a source under /tmp or under a directory only root may enter stays reachable.
 *
 * With a parent-death tool (parent-death.ts) the process dies with the runner: setpriv gives
 * unshare a parent-death SIGKILL, `--kill-child` passes it on to the namespace's first
 * process, and a container that runs as another user gets it again from the setpriv that
 * changes the user (the kernel clears it on that change).
 *
 * Without namespaces the argv is spawned directly and mounts are not possible (the runner
 * warns once); volumes then exist only at their host paths.
 */
import { posix } from 'node:path';

export interface Mount {
  /** Host path (file or directory). */
  source: string;
  /** Path inside the container. */
  target: string;
  readOnly: boolean;
  /** Bind a single file (the target is created as a file). */
  file: boolean;
}

export interface NamespaceTools {
  /** The runner directory, reachable from inside the namespace at `stage`. */
  root: string;
  /** An empty directory on the host used as the stage mount point. */
  stage: string;
  unshare: string;
  sh: string;
  mount: string;
  mkdir: string;
  /** setpriv, when installed: needed to honour runAsUser/runAsGroup. */
  setpriv?: string;
  /** Host paths mounted at fixed paths in every container (sources outside the runner directory). */
  binds?: Mount[];
}

export interface LaunchPlan {
  argv: string[];
  mounts: Mount[];
  /** Working directory inside the container (created when missing). */
  cwd: string;
  /** A host directory bind-mounted at /tmp, unless a volume is mounted there. */
  privateTmp?: string;
  runAs?: { uid: number; gid: number; groups: number[] };
}

export interface Launch {
  file: string;
  args: string[];
  /** Where to spawn (only meaningful without namespaces). */
  cwd: string;
}

export function quote(s: string): string {
  return `'${s.replaceAll("'", `'\\''`)}'`;
}

/** Maps a host path under the runner directory to its path inside the namespace. */
export function staged(path: string, tools: NamespaceTools): string {
  const rel = posix.relative(tools.root, path);
  return rel === '' ? tools.stage : rel.startsWith('..') || posix.isAbsolute(rel) ? path : posix.join(tools.stage, rel);
}

/**
 * The command line for one container. `pdeathsig` is the path of a setpriv that can set a
 * parent-death signal (parent-death.ts); without it the process outlives a killed runner.
 */
export function buildLaunch(plan: LaunchPlan, tools: NamespaceTools | undefined, pdeathsig?: string): Launch {
  const dying = (file: string, args: string[]) =>
    pdeathsig ? { file: pdeathsig, args: ['--pdeathsig', 'SIGKILL', '--', file, ...args] } : { file, args };
  if (!tools) return { ...dying(plan.argv[0], plan.argv.slice(1)), cwd: plan.cwd };
  const q = quote;
  const lines = ['set -e', `${q(tools.mount)} --bind ${q(tools.root)} ${q(tools.stage)}`];
  const bind = (m: Mount, host = false) => {
    const src = q(host ? m.source : staged(m.source, tools));
    const dst = q(m.target);
    if (m.file) lines.push(`[ -e ${dst} ] || { ${q(tools.mkdir)} -p ${q(posix.dirname(m.target))}; : > ${dst}; }`);
    else lines.push(`${q(tools.mkdir)} -p ${dst}`);
    lines.push(`${q(tools.mount)} --bind ${src} ${dst}`);
    if (m.readOnly) lines.push(`${q(tools.mount)} -o remount,bind,ro ${dst}`);
  };
  for (const m of tools.binds ?? []) bind(m, true);
  const depth = (p: string) => posix.normalize(p).split('/').filter(Boolean).length;
  const mounts = [...plan.mounts].sort((a, b) => depth(a.target) - depth(b.target));
  if (plan.privateTmp && !mounts.some((m) => posix.normalize(m.target).replace(/\/+$/, '') === '/tmp')) {
    bind({ source: plan.privateTmp, target: '/tmp', readOnly: false, file: false });
  }
  for (const m of mounts) bind(m);
  const cwd = staged(plan.cwd, tools);
  lines.push(`${q(tools.mkdir)} -p ${q(cwd)}`, `cd ${q(cwd)}`);
  if (plan.runAs && tools.setpriv) {
    const { uid, gid, groups } = plan.runAs;
    const groupArg = groups.length ? `--groups=${groups.join(',')}` : '--clear-groups';
    lines.push(`exec ${q(tools.setpriv)} --reuid=${uid} --regid=${gid} ${groupArg}${pdeathsig ? ' --pdeathsig SIGKILL' : ''} -- "$@"`);
  } else {
    lines.push('exec "$@"');
  }
  const unshareArgs = [
    '--mount',
    '--propagation',
    'private',
    '--pid',
    '--fork',
    ...(pdeathsig ? ['--kill-child=SIGKILL'] : []),
    '--mount-proc',
  ];
  return { ...dying(tools.unshare, [...unshareArgs, '--', tools.sh, '-c', lines.join('\n'), 'sh', ...plan.argv]), cwd: '/' };
}
