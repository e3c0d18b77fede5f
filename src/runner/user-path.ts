/**
 * PATH for a container that runs as a non-root user. The runner hands containers its own PATH
 * (images are ignored), and entries only root can reach (e.g. `/root/.pyenv/shims` on a
 * developer machine) make a non-root container's `python3` resolve to a file its user may not
 * execute: `setpriv` looks the command up while it still holds root's rights. A real image has
 * no such entries, so they are dropped: a directory stays only when every directory on the way
 * to it is searchable by others.
 */
import { statSync } from 'node:fs';

const FALLBACK = '/usr/local/bin:/usr/bin:/bin';

export function reachableByOthers(dir: string, stat: (p: string) => { mode: number } = statSync): boolean {
  if (!dir.startsWith('/')) return false;
  let path = '';
  for (const part of dir.split('/').filter(Boolean)) {
    path += `/${part}`;
    try {
      if ((stat(path).mode & 0o001) === 0) return false;
    } catch {
      return false;
    }
  }
  return true;
}

/** The entries of `path` a non-root user can reach; a plain system PATH when none are left. */
export function pathForUser(path: string, uid: number | undefined, stat?: (p: string) => { mode: number }): string {
  if (!uid) return path;
  return (
    path
      .split(':')
      .filter((d) => reachableByOthers(d, stat))
      .join(':') || FALLBACK
  );
}
