/**
 * Unzipping an input artifact (`archive: {zip: {}}` on an input: the spec's "zip unzips input
 * artifacts"), with the same distrust as tar extraction (unpack.ts): names that are absolute or
 * climb out, links (a zip's symbolic links are refused outright: nothing needs them in an input),
 * and more than `maxEntries` entries or `maxBytes` bytes are refused, naming the entry. Entry
 * sizes are checked against what is really inflated (a zip bomb lying in its headers fails too).
 * Everything goes into `root`, a fresh staging directory the caller renames into place.
 */
import { createWriteStream, mkdirSync } from 'node:fs';
import { dirname, join, posix } from 'node:path';
import { pipeline } from 'node:stream/promises';
import yauzl from 'yauzl';
import { entryProblem } from './unpack.js';

const S_IFMT = 0o170000;
const S_IFREG = 0o100000;
const S_IFDIR = 0o040000;

/** Extracts the zip `file` into `root`; throws a message for `refused` (the caller names the artifact). */
export async function unzipSafely(file: string, root: string, limits: { maxEntries: number; maxBytes: number }): Promise<void> {
  const zip = await new Promise<yauzl.ZipFile>((resolve, reject) =>
    yauzl.open(file, { lazyEntries: true, autoClose: true, validateEntrySizes: true, strictFileNames: true }, (err, z) =>
      err ? reject(new Error(`not a zip archive: ${err.message}`)) : resolve(z),
    ),
  );
  let entries = 0;
  let bytes = 0;
  try {
    await new Promise<void>((resolve, reject) => {
      zip.on('error', reject);
      zip.on('end', resolve);
      zip.on('entry', (e: yauzl.Entry) => {
        const run = async () => {
          entries++;
          bytes += e.uncompressedSize;
          if (entries > limits.maxEntries) throw new Error(`it has more than ${limits.maxEntries} entries`);
          if (bytes > limits.maxBytes) throw new Error(`it unpacks to more than ${limits.maxBytes} bytes`);
          const unixMode = (e.externalFileAttributes >>> 16) & 0xffff;
          const kind = unixMode & S_IFMT;
          const isDir = e.fileName.endsWith('/') || kind === S_IFDIR;
          if (kind !== 0 && kind !== S_IFREG && kind !== S_IFDIR)
            throw new Error(`entry ${JSON.stringify(e.fileName)} is a link or special file; only files and directories are unzipped`);
          const problem = entryProblem(e.fileName, isDir ? 'Directory' : 'File', undefined);
          if (problem) throw new Error(problem);
          const target = join(root, posix.normalize(e.fileName));
          if (isDir) {
            mkdirSync(target, { recursive: true, mode: 0o755 });
            return;
          }
          mkdirSync(dirname(target), { recursive: true, mode: 0o755 });
          const body = await new Promise<NodeJS.ReadableStream>((res, rej) => zip.openReadStream(e, (err, s) => (err ? rej(err) : res(s))));
          const mode = kind === S_IFREG && unixMode & 0o111 ? 0o755 : 0o644;
          await pipeline(body, createWriteStream(target, { mode, flags: 'wx' }));
        };
        run().then(() => zip.readEntry(), reject);
      });
      zip.readEntry();
    });
  } finally {
    zip.close();
  }
}
