/**
 * The GCS driver (`vendorCObject`), on the official SDK (@google-cloud/storage): uploads stream a
 * file through a resumable upload (retried by the SDK, checked against the CRC32C the server
 * computes), downloads stream the object to a file (checked the same way). Tested against
 * fake-gcs-server (the token exchange with Google cannot run here: no internet).
 *
 * Credentials are only the service-account key JSON the artifact names (`serviceAccountKeySecret`):
 * ambient credentials (metadata server, GOOGLE_APPLICATION_CREDENTIALS) are never looked for, so
 * a location without a key is refused. `endpoint` (PLUGFLOW_GCS_ENDPOINT) points the driver at a
 * GCS-compatible server instead of storage.googleapis.com; requests to it are not signed.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Storage, type StorageOptions } from '@google-cloud/storage';
import { describeStored, type GcsLocation } from './plan.js';
import { NO_SUCH_OBJECT, StoreError } from './store-error.js';
import { measuring } from './digest.js';

/** The parsed service-account key; a malformed one is an error naming the location, never its content. */
function parseKey(loc: GcsLocation, keyJson: string): { client_email: string; private_key: string; project_id?: string } {
  let key: unknown;
  try {
    key = JSON.parse(keyJson);
  } catch {
    throw new StoreError(
      `the service account key of ${describeStored(loc)} is not JSON (give the key file a service account's "Create key" produced)`,
    );
  }
  const k = key as Record<string, unknown>;
  if (typeof k?.client_email !== 'string' || typeof k.private_key !== 'string')
    throw new StoreError(`the service account key of ${describeStored(loc)} has no client_email and private_key`);
  return k as { client_email: string; private_key: string; project_id?: string };
}

function bucketOf(loc: GcsLocation, keyJson: string | undefined) {
  const opts: StorageOptions = { retryOptions: { autoRetry: true, maxRetries: 4 } };
  if (keyJson) {
    const key = parseKey(loc, keyJson);
    opts.credentials = key;
    if (key.project_id) opts.projectId = key.project_id;
  }
  if (loc.endpoint) {
    // A GCS-compatible server: requests go there unsigned (the SDK's token exchange only talks
    // to Google's token endpoint); the key, when given, is still checked above.
    opts.apiEndpoint = loc.endpoint.replace(/\/+$/, '');
    opts.useAuthWithCustomEndpoint = false;
  } else if (!keyJson) {
    throw new StoreError(
      `${describeStored(loc)} needs serviceAccountKeySecret: plugflow never falls back on ambient credentials (metadata server, GOOGLE_APPLICATION_CREDENTIALS)`,
    );
  }
  return new Storage(opts).bucket(loc.bucket);
}

/** Uploads `file` as the object; returns its size and sha256 (computed while streaming). */
export async function uploadGcsFile(
  loc: GcsLocation,
  keyJson: string | undefined,
  file: string,
): Promise<{ size: number; sha256: string }> {
  const measure = measuring();
  try {
    await pipeline(
      createReadStream(file),
      measure.through,
      bucketOf(loc, keyJson)
        .file(loc.key)
        .createWriteStream({ resumable: true, metadata: { contentType: 'application/octet-stream' } }),
    );
  } catch (err) {
    throw new StoreError(`uploading to ${describeStored(loc)}: ${await explain(loc, keyJson, err)}`);
  }
  return measure.result();
}

/** The object's body as a stream (the caller consumes it); errors name the location. */
export async function openGcsObject(
  loc: GcsLocation,
  keyJson: string | undefined,
): Promise<{ body: Readable; size?: number; close(): void }> {
  const file = bucketOf(loc, keyJson).file(loc.key);
  let size: number | undefined;
  try {
    const [meta] = await file.getMetadata();
    if (meta.size !== undefined) size = Number(meta.size);
  } catch (err) {
    throw new StoreError(`downloading ${describeStored(loc)}: ${await explain(loc, keyJson, err)}`);
  }
  const body = file.createReadStream();
  return { body, ...(size !== undefined ? { size } : {}), close: () => body.destroy() };
}

export async function downloadGcsFile(loc: GcsLocation, keyJson: string | undefined, dest: string): Promise<void> {
  const obj = await openGcsObject(loc, keyJson);
  try {
    await pipeline(obj.body, createWriteStream(dest, { mode: 0o600 }));
  } catch (err) {
    throw new StoreError(`downloading ${describeStored(loc)}: ${gcsMessage(err)}`);
  } finally {
    obj.close();
  }
}

/** The objects under `prefix`, with their names relative to it. */
export async function listGcsObjects(
  loc: GcsLocation,
  keyJson: string | undefined,
  prefix: string,
): Promise<Array<{ key: string; rel: string }>> {
  try {
    const [files] = await bucketOf(loc, keyJson).getFiles({ prefix, autoPaginate: true });
    return files.filter((f) => f.name.length > prefix.length).map((f) => ({ key: f.name, rel: f.name.slice(prefix.length) }));
  } catch (err) {
    throw new StoreError(`listing ${describeStored({ ...loc, key: prefix })}: ${await explain(loc, keyJson, err)}`);
  }
}

/** Deletes the object (what is already gone is not an error). */
export async function deleteGcsObject(loc: GcsLocation, keyJson: string | undefined): Promise<void> {
  try {
    await bucketOf(loc, keyJson).file(loc.key).delete({ ignoreNotFound: true });
  } catch (err) {
    throw new StoreError(`deleting ${describeStored(loc)}: ${gcsMessage(err)}`);
  }
}

/** GCS answers 404 for a missing bucket and a missing object alike: ask which it is. */
async function explain(loc: GcsLocation, keyJson: string | undefined, err: unknown): Promise<string> {
  if (statusOf(err) === 404) {
    const exists = await bucketOf(loc, keyJson)
      .exists()
      .then(([e]) => e)
      .catch(() => true);
    if (!exists) return 'the bucket does not exist (create it first)';
  }
  return gcsMessage(err);
}

/** The HTTP status of an SDK error: `code` on API errors, `status`/`response.status` on upload errors. */
function statusOf(err: unknown): number | undefined {
  const e = err as { code?: unknown; status?: unknown; response?: { status?: unknown } };
  for (const v of [e?.code, e?.status, e?.response?.status]) if (typeof v === 'number') return v;
  return undefined;
}

/** What went wrong, in words a user can act on. */
export function gcsMessage(err: unknown): string {
  const e = err as { message?: string };
  const code = statusOf(err);
  const msg = (e?.message ?? String(err)).split('\n')[0]!;
  if (/invalid_grant|invalid_client|unauthorized_client/.test(msg))
    return `the service account key was refused (check the serviceAccountKeySecret): ${msg}`;
  if (code === 404) return `${NO_SUCH_OBJECT} (${msg})`;
  if (code === 401 || code === 403) return `access denied (check the serviceAccountKeySecret: ${msg})`;
  return `${msg}${code && !msg.includes(String(code)) ? ` (HTTP ${code})` : ''}`;
}
