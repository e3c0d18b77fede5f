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
 *   - more than `maxEntries` entries or `maxBytes` bytes unpacked (a tar bomb);
 *   - once the placed part is chosen (the single top-level entry, or `subPath`), any symbolic link
 *     in it whose target is absolute or climbs out of it: placing re-roots the tree, so a link
 *     that stayed inside the archive can point beside the destination (refuseEscapingLinks).
 * Nothing is written outside a fresh staging directory, which is renamed into place only when the
 * whole archive was extracted cleanly; a refused archive leaves nothing at the destination.
 */
import { chmodSync, closeSync, lstatSync, mkdirSync, openSync, readdirSync, readlinkSync, readSync, renameSync, rmSync } from 'node:fs';
import { isAbsolute, join, normalize, posix, relative, sep } from 'node:path';
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
  try {
    const { placed, maxNodes } = await unpack(fetched, staging, what, opts);
    const chosen = opts.subPath ? insidePath(placed, opts.subPath, what) : placed;
    // Only a tarball can carry symbolic links that placing re-roots (a zip's links are refused
    // outright; a directory placed as-is, e.g. a git checkout, keeps the shape it was fetched in).
    if (maxNodes !== undefined) refuseEscapingLinks(chosen, staging, what, maxNodes);
    rmSync(dest, { recursive: true, force: true });
    renameSync(chosen, dest);
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  if (opts.mode !== undefined) applyMode(dest, opts.mode, opts.recurseMode === true);
}

/**
 * What is to be placed: the fetched file or directory as it is, or what it unpacked to inside
 * `staging`. `maxNodes` (set only for an extracted tarball) bounds the files, directories and links
 * the extraction can have created, so the check of the placed tree cannot be made to run forever.
 */
async function unpack(fetched: string, staging: string, what: string, opts: PlaceOptions): Promise<{ placed: string; maxNodes?: number }> {
  if (lstatSync(fetched).isDirectory() || opts.archive === 'none') {
    return { placed: fetched }; // a directory stored without archive (fetched object by object), or asked as-is
  }
  if (opts.archive === 'zip') {
    mkdirSync(staging, { mode: 0o755 });
    const { unzipSafely } = await import('./unzip.js');
    try {
      await unzipSafely(fetched, staging, {
        maxEntries: opts.maxEntries ?? DEFAULT_MAX_ENTRIES,
        maxBytes: opts.maxBytes ?? DEFAULT_MAX_BYTES,
      });
    } catch (err) {
      throw new UnpackError(`${what}: the zip archive was refused and nothing was placed: ${(err as Error).message}`);
    }
    return { placed: staging };
  }
  if (!isGzip(fetched)) return { placed: fetched };
  mkdirSync(staging, { mode: 0o755 });
  const maxNodes = await extractSafely(fetched, staging, what, opts);
  if (maxNodes === undefined) return { placed: fetched }; // gzip, but not a tarball: a compressed file, placed as it is
  const top = readdirSync(staging);
  return { placed: top.length === 1 ? join(staging, top[0]) : staging, maxNodes };
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

/**
 * Extracts into `root`; undefined when the gzip data is not a tar archive, else an upper bound on
 * the nodes extracted (each entry plus the parent directories its name may have created).
 */
async function extractSafely(file: string, root: string, what: string, opts: PlaceOptions): Promise<number | undefined> {
  const maxEntries = opts.maxEntries ?? DEFAULT_MAX_ENTRIES;
  const maxBytes = opts.maxBytes ?? DEFAULT_MAX_BYTES;
  let refused: string | undefined;
  let entries = 0;
  let nodes = 0;
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
        nodes += path.split('/').length;
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
    throw new UnpackError(`${what}: the archive was refused and nothing was placed: ${refused}`);
  }
  return !notTar || entries > 0 ? nodes : undefined;
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

/**
 * Refuses a placed tree holding a symbolic link that leaves it. The per-entry check (entryProblem)
 * judges links against the extraction root, but placing re-roots the tree — the archive's single
 * top-level entry, or the subPath, becomes the destination — so `top/dir/l -> ../../x`, inside the
 * archive, would point beside the destination once placed. Links are read, never followed; the
 * walk stops at `maxNodes` (what the extraction can have created). `staging` only names entries
 * as they are in the archive.
 */
function refuseEscapingLinks(placed: string, staging: string, what: string, maxNodes: number): void {
  const pending = [''];
  for (let seen = 0; pending.length > 0; seen++) {
    if (seen > maxNodes)
      throw new UnpackError(`${what}: the archive was refused and nothing was placed: it unpacked to more than ${maxNodes} entries`);
    const rel = pending.pop() as string;
    const full = rel ? join(placed, rel) : placed;
    const st = lstatSync(full);
    if (st.isSymbolicLink()) {
      const target = readlinkSync(full);
      if (!rel || posix.isAbsolute(target) || escapes(posix.join(posix.dirname(rel), target))) {
        const name = relative(staging, full).split(sep).join('/');
        throw new UnpackError(
          `${what}: the archive was refused and nothing was placed: symbolic link ${JSON.stringify(name)} points outside the artifact's destination once placed (${JSON.stringify(target)}); repack it with links that stay inside the packed directory`,
        );
      }
    } else if (st.isDirectory()) {
      for (const e of readdirSync(full)) pending.push(rel ? `${rel}/${e}` : e);
    }
  }
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
