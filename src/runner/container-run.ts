/**
 * What the runner does around one run of one container, as a container runtime would: the
 * command line with `$(VAR)` expanded, the volume mounts (with subPath / subPathExpr), a
 * private /tmp, the working directory, the termination message file, the user to run as, and
 * afterwards the termination message as the kubelet reads it.
 */
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, readSync, statSync, writeFileSync } from 'node:fs';
import { join, normalize } from 'node:path';
import { expandVars } from '../pods/expand-vars.js';
import { DEFAULT_TERMINATION_MESSAGE_PATH, TERMINATION_MESSAGE_LIMIT } from '../pods/layout.js';
import type { LaunchPlan, Mount } from './launch.js';

export class StartError extends Error {}

/** Host paths of one container's private files. */
export function containerDirs(runDir: string, name: string): { dir: string; tmp: string; termination: string } {
  const dir = join(runDir, 'containers', name);
  return { dir, tmp: join(dir, 'tmp'), termination: join(dir, 'termination-log') };
}

/**
 * The directory a container starts in, as a container runtime picks it: `workingDir`, else the
 * image's WORKDIR, else `/`. The runner never reads images, so their WORKDIR is not known and
 * `/` is used (the image default of alpine, busybox, python, ...): a script's relative
 * `open("result.txt")` is then the `/result.txt` its outputs declare, as in a real pod. That `/`
 * is the host's, like every path outside the volumes and `/tmp` (see the README).
 */
export function workingDirectory(c: V1Container): string {
  return c.workingDir || '/';
}

/**
 * The process's argv. The image is ignored, so its ENTRYPOINT/CMD are unknown: command (plus
 * args) runs as given, args alone are taken as the whole command line, and neither is an error.
 */
export function containerArgv(c: V1Container, env: Record<string, string>): string[] {
  const argv = [...(c.command ?? []), ...(c.args ?? [])].map((a) => expandVars(a, env));
  if (argv.length === 0) {
    throw new StartError(
      `container "${c.name}" has no command or args; the local pod runner ignores images, so it cannot run an image's default entrypoint`,
    );
  }
  return argv;
}

export interface PlanInput {
  pod: V1Pod;
  container: V1Container;
  env: Record<string, string>;
  volumes: Map<string, string>;
  runDir: string;
}

/** Prepares the container's directories and returns how to launch it. */
export function planContainer({ pod, container: c, env, volumes, runDir }: PlanInput): LaunchPlan {
  const dirs = containerDirs(runDir, c.name);
  mkdirSync(dirs.tmp, { recursive: true });
  chmodSync(dirs.tmp, 0o1777);
  // A fresh, empty termination message file per run, writable by any user the container runs as.
  writeFileSync(dirs.termination, '');
  chmodSync(dirs.termination, 0o666);

  const mounts: Mount[] = [];
  for (const m of c.volumeMounts ?? []) {
    const base = volumes.get(m.name);
    if (base === undefined) throw new StartError(`volumeMount ${m.mountPath}: volume "${m.name}" is not defined in the pod`);
    const sub = m.subPathExpr ? expandVars(m.subPathExpr, env) : m.subPath;
    let source = base;
    if (sub) {
      const n = normalize(sub);
      if (n.startsWith('/') || n === '..' || n.startsWith('../'))
        throw new StartError(`volumeMount ${m.mountPath}: subPath "${sub}" must be relative and stay inside the volume`);
      source = join(base, n);
      if (!existsSync(source)) mkdirSync(source, { recursive: true, mode: 0o777 });
    }
    mounts.push({ source, target: m.mountPath, readOnly: !!m.readOnly, file: statSync(source).isFile() });
  }
  mounts.push({
    source: dirs.termination,
    target: c.terminationMessagePath || DEFAULT_TERMINATION_MESSAGE_PATH,
    readOnly: false,
    file: true,
  });

  const sc = c.securityContext ?? {};
  const psc = pod.spec?.securityContext ?? {};
  const uid = sc.runAsUser ?? psc.runAsUser;
  if ((sc.runAsNonRoot ?? psc.runAsNonRoot) && uid === 0) {
    throw new StartError(`container "${c.name}" has runAsNonRoot and runAsUser 0, which would run as root`);
  }
  const runAs =
    uid !== undefined && uid !== 0
      ? {
          uid,
          gid: sc.runAsGroup ?? psc.runAsGroup ?? 0,
          groups: [...(psc.fsGroup !== undefined ? [psc.fsGroup] : []), ...(psc.supplementalGroups ?? [])],
        }
      : undefined;

  return { argv: containerArgv(c, env), mounts, cwd: workingDirectory(c), privateTmp: dirs.tmp, runAs };
}

/**
 * The termination message as the kubelet reports it: the file's first 4096 bytes; with
 * `FallbackToLogsOnError`, an empty file and a failure, the end of the log instead.
 */
export function terminationMessage(c: V1Container, runDir: string, exitCode: number, logPath: string): string | undefined {
  const text = readHead(containerDirs(runDir, c.name).termination, TERMINATION_MESSAGE_LIMIT);
  if (text) return text;
  if (c.terminationMessagePolicy === 'FallbackToLogsOnError' && exitCode !== 0) {
    const tail = readTail(logPath, 2048);
    const lines = tail.split('\n');
    return lines.slice(-80).join('\n') || undefined;
  }
  return undefined;
}

function readHead(path: string, max: number): string {
  try {
    const fd = openSync(path, 'r');
    try {
      const buf = Buffer.alloc(max);
      return buf.subarray(0, readSync(fd, buf, 0, max, 0)).toString('utf8');
    } finally {
      closeSync(fd);
    }
  } catch {
    return '';
  }
}

function readTail(path: string, max: number): string {
  try {
    const size = statSync(path).size;
    const start = Math.max(0, size - max);
    const fd = openSync(path, 'r');
    try {
      const buf = Buffer.alloc(size - start);
      return buf.subarray(0, readSync(fd, buf, 0, buf.length, start)).toString('utf8');
    } finally {
      closeSync(fd);
    }
  } catch {
    return '';
  }
}
