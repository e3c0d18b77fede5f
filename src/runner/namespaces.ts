/**
 * Whether this machine lets the runner give each container a private mount (and PID)
 * namespace: it needs root (CAP_SYS_ADMIN) and util-linux's `unshare`. Checked once at start
 * by actually creating a namespace with a bind mount, since containers and seccomp profiles
 * can forbid it even to root.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NamespaceTools } from './launch.js';
import { errorMessage } from '../log/error-message.js';

/** Mount point of the runner directory inside each container's namespace (created once). */
export const STAGE_DIR = '/run/plugflow-runner-stage';

function which(name: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile('sh', ['-c', `command -v ${name}`], (err, stdout) => resolve(err ? undefined : stdout.trim() || undefined));
  });
}

function run(file: string, args: string[]): Promise<{ ok: boolean; out: string }> {
  return new Promise((resolve) => {
    execFile(file, args, { timeout: 10_000 }, (err, stdout, stderr) => resolve({ ok: !err, out: `${stdout}${stderr}`.trim() }));
  });
}

/** Returns the tools when namespaces work here, or the reason they do not. */
export async function detectNamespaceTools(root: string): Promise<{ tools: NamespaceTools } | { reason: string }> {
  if (process.platform !== 'linux') return { reason: `mount namespaces need Linux (this is ${process.platform})` };
  if (process.getuid?.() !== 0) return { reason: 'mount namespaces need root (the runner is not running as uid 0)' };
  const [unshare, sh, mount, mkdir, setpriv] = await Promise.all(['unshare', 'sh', 'mount', 'mkdir', 'setpriv'].map(which));
  if (!unshare || !sh || !mount || !mkdir) return { reason: 'unshare, sh, mount and mkdir (util-linux, coreutils) must be installed' };
  try {
    mkdirSync(STAGE_DIR, { recursive: true });
  } catch (err) {
    return { reason: `cannot create ${STAGE_DIR}: ${errorMessage(err)}` };
  }
  // Prove it: bind a file's directory inside a new mount + PID namespace and read it back.
  const probe = mkdtempSync(join(tmpdir(), 'plugflow-ns-probe-'));
  try {
    writeFileSync(join(probe, 'ok'), 'ok');
    const script = `${mount} --bind ${probe} ${STAGE_DIR} && cat ${STAGE_DIR}/ok`;
    const res = await run(unshare, ['--mount', '--propagation', 'private', '--pid', '--fork', '--mount-proc', '--', sh, '-c', script]);
    if (!res.ok || res.out !== 'ok') return { reason: `creating a mount namespace failed: ${res.out || 'no output'}` };
  } finally {
    rmSync(probe, { recursive: true, force: true });
  }
  return { tools: { root, stage: STAGE_DIR, unshare, sh, mount, mkdir, ...(setpriv ? { setpriv } : {}) } };
}
