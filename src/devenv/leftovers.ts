/**
 * What a killed `plugflow dev` or test run leaves behind, and how the next one cleans it up.
 * A control plane records in its directory who owns it and which processes it started (an
 * owner file, removed on a clean stop). A directory whose owner file names a process that is
 * gone was left by a run that did not stop: its recorded processes still running are killed
 * (normally the parent-death signal took them already, see runner/parent-death.ts) and the
 * directory (etcd data, certificates, logs) is removed.
 *
 * Processes are named by pid and start time (from /proc), so a pid the kernel gave to an
 * unrelated process since is never killed.
 */
import { existsSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const OWNER_FILE = 'plugflow-owner.json';

export interface RecordedProcess {
  name: string;
  pid: number;
  /** Start time in clock ticks since boot (/proc/<pid>/stat field 22); absent off Linux. */
  start?: string;
}

export interface OwnerRecord {
  owner: RecordedProcess;
  children: RecordedProcess[];
}

/** A process's start time, or undefined when it does not exist (or off Linux). */
export function processStartTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: count from the last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

/** Whether the recorded process still runs (the same process, not a reused pid). */
export function stillRunning(p: RecordedProcess): boolean {
  try {
    process.kill(p.pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  if (p.start === undefined) return true;
  return processStartTime(p.pid) === p.start;
}

export function recordProcess(name: string, pid: number): RecordedProcess {
  const start = processStartTime(pid);
  return { name, pid, ...(start !== undefined ? { start } : {}) };
}

/** Writes (replaces) the owner file of `dir`: this process owns it and started `children`. */
export function writeOwnerFile(dir: string, children: RecordedProcess[]): void {
  const record: OwnerRecord = { owner: recordProcess('owner', process.pid), children };
  const tmp = join(dir, `${OWNER_FILE}.tmp`);
  writeFileSync(tmp, JSON.stringify(record, null, 1));
  renameSync(tmp, join(dir, OWNER_FILE));
}

export function removeOwnerFile(dir: string): void {
  rmSync(join(dir, OWNER_FILE), { force: true });
}

export function readOwnerFile(dir: string): OwnerRecord | undefined {
  try {
    const parsed = JSON.parse(readFileSync(join(dir, OWNER_FILE), 'utf8')) as OwnerRecord;
    if (typeof parsed?.owner?.pid !== 'number' || !Array.isArray(parsed.children)) return undefined;
    return parsed;
  } catch {
    return undefined;
  }
}

export type DirState =
  { state: 'none' } | { state: 'live'; owner: RecordedProcess } | { state: 'stale'; owner: RecordedProcess; killed: RecordedProcess[] };

/**
 * Looks at the owner file of `dir`. A live owner (another process) is left alone. A gone owner
 * means leftovers: its still-running children are killed (SIGKILL, waited for up to 5 s) and
 * the owner file is removed. The caller decides what to do with the directory.
 */
export async function reapDir(dir: string): Promise<DirState> {
  const record = readOwnerFile(dir);
  if (!record) return { state: 'none' };
  if (stillRunning(record.owner)) return { state: 'live', owner: record.owner };
  const killed = record.children.filter((c) => c.start !== undefined && stillRunning(c));
  for (const c of killed) {
    try {
      process.kill(c.pid, 'SIGKILL');
    } catch {
      // Gone meanwhile.
    }
  }
  const deadline = Date.now() + 5000;
  while (killed.some(stillRunning) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  removeOwnerFile(dir);
  return { state: 'stale', owner: record.owner, killed };
}

/** One line for the user about a stale directory that was cleaned up. */
export function describeReaped(dir: string, s: { owner: RecordedProcess; killed: RecordedProcess[] }, removed: boolean): string {
  const killed = s.killed.length
    ? `killed ${s.killed.map((c) => `${c.name} (pid ${c.pid})`).join(', ')}`
    : 'no process of it was still running';
  return `cleaned up after a run that did not stop (pid ${s.owner.pid}): ${killed}${removed ? `; removed ${dir}` : ''}`;
}

/**
 * Cleans up the directories `parent/<prefix>*` (their owner file in `sub`, e.g. the
 * control-plane directory of a dev directory) that a killed run left: kills its processes
 * and removes the whole directory. Returns a line per directory cleaned up, and one per
 * directory still in use by a live run.
 */
export async function reapLeftovers(parent: string, prefix: string, sub = '', keep?: string): Promise<string[]> {
  if (!existsSync(parent)) return [];
  const lines: string[] = [];
  let entries: string[];
  try {
    entries = readdirSync(parent).filter((e) => e.startsWith(prefix));
  } catch {
    return [];
  }
  for (const entry of entries) {
    const dir = join(parent, entry);
    if (keep && dir === keep) continue;
    const s = await reapDir(join(dir, sub));
    if (s.state === 'live') lines.push(`${dir} is in use by a running process (pid ${s.owner.pid}); left alone`);
    if (s.state !== 'stale') continue;
    rmSync(dir, { recursive: true, force: true });
    lines.push(describeReaped(dir, s, true));
  }
  return lines;
}
