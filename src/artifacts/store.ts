/**
 * Stored artifacts whatever holds them: the object store (s3.ts, `vendorAObject`) or the blob
 * store (azure-blob.ts, `vendorB`). What is the same for both lives here once: a directory stored
 * without archive is one object per file under `<key>/`, fetched back by listing that prefix,
 * with object names that would leave the destination refused; deletion takes the prefix too.
 */
import { mkdirSync, readdirSync } from 'node:fs';
import { dirname, join, posix } from 'node:path';
import { PassThrough, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { pack } from 'tar-stream';
import { describeStored, isBlob, isGcs, type BlobLocation, type GcsLocation, type StoreLocation, type StoredLocation } from './plan.js';

export { describeStored };
import { NO_SUCH_OBJECT, StoreError } from './store-error.js';

/** Credentials of one location (absent: anonymous): S3 keys, a blob account key, a GCS service-account key file. */
export type Credentials = { accessKey: string; secretKey: string } | { accountKey: string } | { serviceAccountKey: string } | undefined;

/** What each store does; the shared logic below is written once on top of it. */
interface Driver {
  upload(loc: StoredLocation, creds: Credentials, file: string): Promise<{ size: number; sha256: string }>;
  download(loc: StoredLocation, creds: Credentials, file: string): Promise<void>;
  open(loc: StoredLocation, creds: Credentials): Promise<{ body: Readable; size?: number; close(): void }>;
  list(loc: StoredLocation, creds: Credentials, prefix: string): Promise<Array<{ key: string; rel: string }>>;
  remove(loc: StoredLocation, creds: Credentials): Promise<void>;
}

/** The driver of a location, loaded on first use (the pod side loads only the SDK it needs). */
async function driver(loc: StoredLocation): Promise<Driver> {
  if (isBlob(loc)) {
    const b = await import('./azure-blob.js');
    const at = (l: StoredLocation) => l as BlobLocation;
    const key = (c: Credentials) => (c && 'accountKey' in c ? c.accountKey : undefined);
    return {
      upload: (l, c, f) => b.uploadBlobFile(at(l), key(c), f),
      download: (l, c, f) => b.downloadBlobFile(at(l), key(c), f),
      open: (l, c) => b.openBlob(at(l), key(c)),
      list: (l, c, p) => b.listBlobs(at(l), key(c), p),
      remove: async (l, c) => void (await b.deleteBlob(at(l), key(c))),
    };
  }
  if (isGcs(loc)) {
    const g = await import('./gcs.js');
    const at = (l: StoredLocation) => l as GcsLocation;
    const key = (c: Credentials) => (c && 'serviceAccountKey' in c ? c.serviceAccountKey : undefined);
    return {
      upload: (l, c, f) => g.uploadGcsFile(at(l), key(c), f),
      download: (l, c, f) => g.downloadGcsFile(at(l), key(c), f),
      open: (l, c) => g.openGcsObject(at(l), key(c)),
      list: (l, c, p) => g.listGcsObjects(at(l), key(c), p),
      remove: (l, c) => g.deleteGcsObject(at(l), key(c)),
    };
  }
  const s = await import('./s3.js');
  const at = (l: StoredLocation) => l as StoreLocation;
  const keys = (c: Credentials) => (c && 'accessKey' in c ? c : undefined);
  return {
    upload: (l, c, f) => s.uploadFile(at(l), keys(c), f),
    download: (l, c, f) => s.downloadFile(at(l), keys(c), f),
    open: (l, c) => s.openObject(at(l), keys(c)),
    list: (l, c, p) => s.listPrefix(at(l), keys(c), p),
    remove: (l, c) => s.deleteObject(at(l), keys(c)),
  };
}

function keyOf(loc: StoredLocation): string {
  return isBlob(loc) ? loc.blob : loc.key;
}

function withKey(loc: StoredLocation, key: string): StoredLocation {
  return isBlob(loc) ? { ...loc, blob: key } : { ...loc, key };
}

/** The credentials a location's plan names, from `env`; an unset variable is an error naming it. */
export function credentialsFromEnv(loc: StoredLocation, env: NodeJS.ProcessEnv = process.env): Credentials {
  const get = (name: string, what: string): string => {
    const v = env[name];
    if (v === undefined || v === '')
      throw new StoreError(`the ${what} of ${describeStored(loc)} is not available (its Secret key is missing or empty)`);
    return v;
  };
  if (isBlob(loc)) return loc.accountKeyEnv ? { accountKey: get(loc.accountKeyEnv, 'account key') } : undefined;
  if (isGcs(loc)) return loc.serviceAccountKeyEnv ? { serviceAccountKey: get(loc.serviceAccountKeyEnv, 'service account key') } : undefined;
  if (!loc.accessKeyEnv && !loc.secretKeyEnv) return undefined;
  return { accessKey: get(loc.accessKeyEnv ?? '', 'access key'), secretKey: get(loc.secretKeyEnv ?? '', 'secret key') };
}

/** Uploads one file; its size and sha256 (computed while streaming). */
export async function uploadStored(loc: StoredLocation, creds: Credentials, file: string): Promise<{ size: number; sha256: string }> {
  return (await driver(loc)).upload(loc, creds, file);
}

/** Uploads a directory stored without archive: each regular file becomes `<key>/<relative path>`. */
export async function uploadTree(loc: StoredLocation, creds: Credentials, dir: string): Promise<{ files: number; size: number }> {
  const d = await driver(loc);
  const base = keyOf(loc).replace(/\/+$/, '');
  let files = 0;
  let size = 0;
  const walk = async (rel: string): Promise<void> => {
    for (const e of readdirSync(join(dir, rel), { withFileTypes: true })) {
      const child = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) await walk(child);
      else if (e.isFile()) {
        size += (await d.upload(withKey(loc, `${base}/${child}`), creds, join(dir, child))).size;
        files++;
      }
    }
  };
  await walk('');
  return { files, size };
}

/**
 * Opens what the location names as one stream: the object as stored, or — for a directory stored
 * without archive — a tar+gzip of the objects under `<key>/`, built while streaming (one object
 * open at a time), so `plugflow cp` and the download endpoint hand out a directory as one file.
 */
export async function openStoredOrTree(
  loc: StoredLocation,
  creds: Credentials,
): Promise<{ body: Readable; size?: number; close(): void; directory: boolean }> {
  const d = await driver(loc);
  try {
    return { ...(await d.open(loc, creds)), directory: false };
  } catch (err) {
    if (!(err instanceof StoreError) || !err.message.includes(NO_SUCH_OBJECT)) throw err;
    const keys = await d.list(loc, creds, `${keyOf(loc).replace(/\/+$/, '')}/`);
    if (keys.length === 0) throw err;
    // One top-level directory, as an archived directory has: unpacking places what is inside it.
    const top = posix.basename(keyOf(loc).replace(/\/+$/, '')) || 'artifact';
    const archive = pack();
    const out = new PassThrough();
    const write = async () => {
      for (const { key, rel } of keys) {
        const name = posix.normalize(rel);
        if (name.startsWith('../') || name === '..' || posix.isAbsolute(name)) continue; // never handed out
        const obj = await d.open(withKey(loc, key), creds);
        try {
          if (obj.size === undefined) throw new StoreError(`${describeStored(withKey(loc, key))} did not say its size`);
          await pipeline(obj.body, archive.entry({ name: `${top}/${name}`, size: obj.size, mode: 0o644 }));
        } finally {
          obj.close();
        }
      }
      archive.finalize();
    };
    write().catch((e: unknown) => archive.destroy(e as Error));
    pipeline(archive, createGzip(), out).catch((e: unknown) => out.destroy(e as Error));
    return { body: out, close: () => archive.destroy(), directory: true };
  }
}

/**
 * Downloads what the location names: the object into `dest` (a file), or — when there is none and
 * objects exist under `<key>/` (a directory stored without archive) — each of them into the
 * directory `dest`. Object names that would leave `dest` are refused.
 */
export async function downloadStored(loc: StoredLocation, creds: Credentials, dest: string): Promise<'file' | 'directory'> {
  const d = await driver(loc);
  try {
    await d.download(loc, creds, dest);
    return 'file';
  } catch (err) {
    if (!(err instanceof StoreError) || !err.message.includes(NO_SUCH_OBJECT)) throw err;
    const keys = await d.list(loc, creds, `${keyOf(loc).replace(/\/+$/, '')}/`);
    if (keys.length === 0) throw err;
    mkdirSync(dest, { recursive: true, mode: 0o755 });
    for (const { key, rel } of keys) {
      const norm = posix.normalize(rel);
      if (norm.startsWith('../') || norm === '..' || posix.isAbsolute(norm) || norm === '.')
        throw new StoreError(
          `downloading ${describeStored(loc)}: the object ${JSON.stringify(key)} would be written outside the artifact's path`,
        );
      mkdirSync(dirname(join(dest, norm)), { recursive: true, mode: 0o755 });
      await d.download(withKey(loc, key), creds, join(dest, norm));
    }
    return 'directory';
  }
}

/** The keys of every object whose key starts with the location's key (or blob name), as full keys. */
export async function listStored(loc: StoredLocation, creds: Credentials): Promise<string[]> {
  const d = await driver(loc);
  return (await d.list(loc, creds, keyOf(loc))).map((k) => k.key);
}

/**
 * Deletes what the location names: the object, and every object under `<key>/` (a directory
 * stored without archive). What is already gone is not an error. Returns how many were named.
 */
export async function deleteStored(loc: StoredLocation, creds: Credentials): Promise<number> {
  const d = await driver(loc);
  const keys = [keyOf(loc), ...(await d.list(loc, creds, `${keyOf(loc).replace(/\/+$/, '')}/`)).map((k) => k.key)];
  for (const key of keys) await d.remove(withKey(loc, key), creds);
  return keys.length;
}
