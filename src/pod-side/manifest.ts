/**
 * `plugflow executor manifest PATH`: the main container of the pod that fetches a resource
 * template's `manifestFrom.artifact`. The init container has placed the artifact at PATH; this
 * prints it unchanged, so the wait report (its beginning and size) and the container log (all of
 * it) carry it to the controller's resource runner. Nothing else may be printed on stdout or
 * stderr: the runner checks the log against the size the report gives.
 */
import { readFileSync, statSync } from 'node:fs';
import { MANIFEST_MAX_BYTES } from '../pods/layout.js';

/** The manifest's bytes, or an error naming the path and what is wrong with it. */
export function readManifestFile(path: string, max = MANIFEST_MAX_BYTES): Buffer {
  let size: number;
  try {
    const st = statSync(path);
    if (st.isDirectory()) throw new Error(`${path} is a directory; manifestFrom.artifact must be one file`);
    size = st.size;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new Error(`${path} does not exist: the artifact was not placed`);
    throw err;
  }
  if (size > max) throw new Error(`the manifest is ${size} bytes, more than the ${max} bytes a resource step reads`);
  const data = readFileSync(path);
  if (data.length === 0) throw new Error(`the manifest at ${path} is empty`);
  return data;
}
