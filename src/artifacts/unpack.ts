/**
 * Placing a fetched artifact at its destination. What was packed is unpacked: a gzipped tar (how
 * plugflow and the peer store outputs by default) is extracted, and its single top-level entry
 * — the file or directory that was packed — becomes the destination. Anything else (a file stored
 * with `archive: none`, a raw or http artifact that is not a tarball) is placed as it is. An input
 * that says `archive: {zip: {}}` is unzipped instead (unzip.ts), one with `archive: {none: {}}`
 * is placed as fetched even when it is a tarball.
 *
 * Archives are untrusted input. Extraction refuses, with an error naming the entry:
 *   - absolute names and names with `..` segments (`../../etc/passwd`);
 *   - symbolic and hard links whose target leaves the extracted tree (absolute, or climbing out);
 *   - device files, fifos and other special entries;
 *   - more than `maxEntries` entries or `maxBytes` bytes unpacked (a tar bomb).
 * Nothing is written outside a fresh staging directory, which is renamed into place only when the
 * whole archive was extracted cleanly; a refused archive leaves nothing at the destination.
 */
import { chmodSync, closeSync, lstatSync, mkdirSync, openSync, readdirSync, readSync, renameSync, rmSync } from 'node:fs';
import { isAbsolute, join, normalize, posix } from 'node:path';
import { extract, type ReadEntry } from 'tar';

export class UnpackError extends Error {}

export interface PlaceOptions {
  /**
   * The input's `archive`: `zip` unzips it (its entries become the destination directory), `none`
   * places it as fetched; unset unpacks a gzipped tar and places anything else as it is.
   */
  archive?: 'zip' | 'none';
  /** Only this path inside the artifact is placed (after unpacking). */
  subPath?: string;
  mode?: number;
  recurseMode?: boolean;
  maxEntries?: number;
  maxBytes?: number;
}

/** Default limits: generous for real trees, small enough that a bomb fails before the disk does. */
export const DEFAULT_MAX_ENTRIES = 1_000_000;
export const DEFAULT_MAX_BYTES = 64 * 1024 ** 3;

/** Moves (or unpacks) `fetched` to `dest`; `what` names the artifact in errors. */
export async function placeArtifact(fetched: string, dest: string, what: string, opts: PlaceOptions = {}): Promise<void> {
  const staging = `${dest}.unpack`;
  rmSync(staging, { recursive: true, force: true });
  let placed: string;
  if (lstatSync(fetched).isDirectory() || opts.archive === 'none') {
    placed = fetched; // a directory stored without archive (fetched object by object), or asked as-is
  } else if (opts.archive === 'zip') {
    mkdirSync(staging, { mode: 0o755 });
    const { unzipSafely } = await import('./unzip.js');
    try {
      await unzipSafely(fetched, staging, {
        maxEntries: opts.maxEntries ?? DEFAULT_MAX_ENTRIES,
        maxBytes: opts.maxBytes ?? DEFAULT_MAX_BYTES,
      });
    } catch (err) {
      rmSync(staging, { recursive: true, force: true });
      throw new UnpackError(`${what}: the zip archive was refused and nothing was placed: ${(err as Error).message}`);
    }
    placed = staging;
  } else if (isGzip(fetched)) {
    mkdirSync(staging, { mode: 0o755 });
    const tarball = await extractSafely(fetched, staging, what, opts);
    if (tarball) {
      const top = readdirSync(staging);
      placed = top.length === 1 ? join(staging, top[0]) : staging;
    } else {
      rmSync(staging, { recursive: true, force: true });
      placed = fetched; // gzip, but not a tarball: a compressed file, placed as it is
    }
  } else {
    placed = fetched;
  }
  if (opts.subPath) placed = insidePath(placed, opts.subPath, what);
  rmSync(dest, { recursive: true, force: true });
  renameSync(placed, dest);
  rmSync(staging, { recursive: true, force: true });
  if (opts.mode !== undefined) applyMode(dest, opts.mode, opts.recurseMode === true);
}

function isGzip(file: string): boolean {
  const fd = openSync(file, 'r');
  try {
    const head = Buffer.alloc(2);
    return readSync(fd, head, 0, 2, 0) === 2 && head[0] === 0x1f && head[1] === 0x8b;
  } finally {
    closeSync(fd);
  }
}

/** Extracts into `root`; false when the gzip data is not a tar archive. */
async function extractSafely(file: string, root: string, what: string, opts: PlaceOptions): Promise<boolean> {
  const maxEntries = opts.maxEntries ?? DEFAULT_MAX_ENTRIES;
  const maxBytes = opts.maxBytes ?? DEFAULT_MAX_BYTES;
  let refused: string | undefined;
  let entries = 0;
  let bytes = 0;
  let notTar = false;
  const refuse = (why: string): boolean => {
    refused ??= why;
    return false;
  };
  try {
    await extract({
      file,
      cwd: root,
      strict: true,
      preservePaths: false,
      preserveOwner: false,
      filter: (path: string, entry: ReadEntry | { type?: string; size?: number; linkpath?: string }) => {
        if (refused) return false;
        const e = entry as ReadEntry;
        entries++;
        bytes += e.size ?? 0;
        if (entries > maxEntries) return refuse(`it has more than ${maxEntries} entries`);
        if (bytes > maxBytes) return refuse(`it unpacks to more than ${maxBytes} bytes`);
        const problem = entryProblem(path, e.type, e.linkpath);
        return problem ? refuse(problem) : true;
      },
      onwarn: (code: string, message: string) => {
        if (code === 'TAR_BAD_ARCHIVE') notTar = true;
        else refused ??= `${message} (${code})`;
      },
    });
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === 'TAR_BAD_ARCHIVE' || code === 'TAR_ABORT') notTar = true;
    else throw new UnpackError(`${what}: cannot unpack the archive: ${(err as Error).message}`);
  }
  if (refused) {
    rmSync(root, { recursive: true, force: true });
    throw new UnpackError(`${what}: the archive was refused and nothing was placed: ${refused}`);
  }
  return !notTar || entries > 0;
}

const KINDS = new Set(['File', 'OldFile', 'ContiguousFile', 'Directory', 'SymbolicLink', 'Link']);

/** Why an entry may not be extracted, or undefined. Pure (exported for tests). */
export function entryProblem(name: string, type: string | undefined, linkpath: string | undefined): string | undefined {
  if (type && !KINDS.has(type)) return `entry ${JSON.stringify(name)} is a ${type}, not a file, directory or link`;
  if (escapes(name)) return `entry ${JSON.stringify(name)} would be written outside the artifact's path`;
  if (type === 'SymbolicLink' && linkpath !== undefined) {
    if (posix.isAbsolute(linkpath) || escapes(posix.join(posix.dirname(name), linkpath)))
      return `symbolic link ${JSON.stringify(name)} points outside the artifact (${JSON.stringify(linkpath)})`;
  }
  if (type === 'Link' && linkpath !== undefined && escapes(linkpath))
    return `hard link ${JSON.stringify(name)} points outside the artifact (${JSON.stringify(linkpath)})`;
  return undefined;
}

function escapes(p: string): boolean {
  if (p.startsWith('/') || /^[A-Za-z]:[\\/]/.test(p)) return true;
  const norm = posix.normalize(p.replaceAll('\\', '/'));
  return norm === '..' || norm.startsWith('../');
}

/** `subPath` inside `base`, refusing one that leaves it. */
function insidePath(base: string, subPath: string, what: string): string {
  if (isAbsolute(subPath) || escapes(subPath))
    throw new UnpackError(`${what}: subPath ${JSON.stringify(subPath)} must stay inside the artifact`);
  const p = join(base, normalize(subPath));
  try {
    lstatSync(p);
  } catch {
    throw new UnpackError(`${what}: subPath ${JSON.stringify(subPath)} does not exist in the artifact`);
  }
  return p;
}

function applyMode(path: string, mode: number, recurse: boolean): void {
  const st = lstatSync(path);
  if (st.isSymbolicLink()) return;
  chmodSync(path, mode);
  if (recurse && st.isDirectory()) for (const e of readdirSync(path)) applyMode(join(path, e), mode, true);
}
