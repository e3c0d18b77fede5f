/**
 * The object-store driver (S3 protocol, `vendorAObject`), on the official AWS SDK: uploads
 * stream a file through the SDK's multipart uploader (each part retried by the SDK on transient
 * errors), downloads stream the object's body to a file. Nothing is held whole in memory.
 *
 * Used by the pod side (wait uploads, init downloads) and by the server (artifact downloads),
 * with credentials read from the environment variables the plan names, or given directly.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  CreateBucketCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  ListObjectsV2Command,
  S3Client,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { describeStored, type StoreLocation } from './plan.js';
import { NO_SUCH_OBJECT, StoreError, storeRetryReporter } from './store-error.js';
import { measuring } from './digest.js';

/** Credentials of one location; absent means anonymous access. */
export interface StoreCredentials {
  accessKey: string;
  secretKey: string;
}

/** Multipart part size: 8 MiB (S3's minimum is 5 MiB; 10,000 parts allow objects up to 78 GiB). */
export const PART_SIZE = 8 * 1024 * 1024;

/** `s3://bucket/key at endpoint`, never credentials. */
export function describe(loc: StoreLocation): string {
  return describeStored(loc);
}

/**
 * How long a store may keep a request waiting. Without limits a store whose address drops
 * packets held a step Running for the system's connect timeout (minutes) per attempt, and one
 * that accepted the connection and never answered held it forever: the pod cannot report while
 * it waits, so the step showed nothing. With them each attempt ends, the SDK retries
 * (maxAttempts), and the step fails with the reason and the attempts made. The idle limit is
 * the pod side's only (it calls reportStoreRetries): the server streams objects to readers who
 * may pause a download longer than that.
 */
export const STORE_TIMEOUTS = { connectMs: 10_000, idleMs: 30_000 };

function defaultTimeouts(): { connectMs: number; idleMs: number } {
  return storeRetryReporter() ? STORE_TIMEOUTS : { connectMs: STORE_TIMEOUTS.connectMs, idleMs: 0 };
}

/** Attempts per request (the first and the SDK's retries of transient failures). */
export const STORE_ATTEMPTS = 5;

export function storeClient(
  loc: StoreLocation,
  creds: StoreCredentials | undefined,
  timeouts: { connectMs: number; idleMs: number } = defaultTimeouts(),
): S3Client {
  // The SDK warns on every process about a Node release plugflow pins itself (package.json engines);
  // in a step pod that warning would end up in the init container's failure message.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const endpoint = /^https?:\/\//.test(loc.endpoint) ? loc.endpoint : `${loc.insecure ? 'http' : 'https'}://${loc.endpoint}`;
  const config: S3ClientConfig = {
    endpoint,
    region: loc.region || 'us-east-1',
    // Path-style addressing works with every S3-compatible server (no per-bucket DNS names).
    forcePathStyle: true,
    maxAttempts: STORE_ATTEMPTS,
    requestHandler: { connectionTimeout: timeouts.connectMs, ...(timeouts.idleMs > 0 ? { socketTimeout: timeouts.idleMs } : {}) },
  };
  if (creds) config.credentials = { accessKeyId: creds.accessKey, secretAccessKey: creds.secretKey };
  else {
    // Anonymous means anonymous. A signer alone is not enough: the SDK still resolves an identity
    // for every request before signing, and without `credentials` that is its default chain —
    // environment variables, shared files, web identity, the ECS and EC2 metadata endpoints, i.e.
    // the node's or the server's own credentials (and with none, every request fails after
    // polling the metadata endpoints). So the identity is a fixed empty one, the signer leaves
    // requests as they are (no Authorization, no x-amz-date/-content-sha256/-security-token),
    // and the default chain, should anything still reach for it, fails instead of being read.
    config.credentials = anonymousIdentity;
    config.signer = { sign: async (request) => request };
    config.credentialDefaultProvider = () => async () => {
      throw new Error('anonymous object-store access: no credentials may be resolved');
    };
  }
  const client = new S3Client(config);
  reportAttempts(client, loc);
  return client;
}

/**
 * Tells the pod side's retry reporter (store-error.ts) about every failed attempt but the last
 * (a middleware inside the SDK's retry loop).
 */
function reportAttempts(client: S3Client, loc: StoreLocation): void {
  type Middleware = Parameters<S3Client['middlewareStack']['addRelativeTo']>[0];
  type Handler = (args: object) => Promise<unknown>;
  // Built once per request (the SDK resolves the stack per command), so `attempt` counts that request's attempts.
  const middleware = (next: Handler, context: { commandName?: string }): Handler => {
    let attempt = 0;
    return async (args) => {
      attempt++;
      try {
        return await next(args);
      } catch (err) {
        const report = storeRetryReporter();
        if (report && attempt < STORE_ATTEMPTS) {
          const request = `${context.commandName ?? 'request'} ${describeStored(loc)}`;
          report(`${request}: attempt ${attempt} of ${STORE_ATTEMPTS} failed (${storeMessage(err)}); retrying`);
        }
        throw err;
      }
    };
  };
  client.middlewareStack.addRelativeTo(middleware as unknown as Middleware, {
    relation: 'after',
    toMiddleware: 'retryMiddleware',
    name: 'plugflowAttemptReport',
  });
}

/** The identity of anonymous requests: never sent, the no-op signer ignores it. */
const anonymousIdentity = async (): Promise<{ accessKeyId: string; secretAccessKey: string }> => ({ accessKeyId: '', secretAccessKey: '' });

/** Uploads `file` to the location; returns its size and sha256 (computed while streaming). */
export async function uploadFile(
  loc: StoreLocation,
  creds: StoreCredentials | undefined,
  file: string,
): Promise<{ size: number; sha256: string }> {
  const client = storeClient(loc, creds);
  try {
    if (loc.createBucketIfNotPresent) await ensureBucket(client, loc);
    const measure = measuring();
    const counted = createReadStream(file).pipe(measure.through);
    const upload = new Upload({
      client,
      params: { Bucket: loc.bucket, Key: loc.key, Body: counted },
      // Parts are buffered whole: 8 MiB × (2 in flight + 1 filling) keeps the wait side's memory
      // flat whatever the artifact's size (bench/artifact-bench.ts: peak RSS of a 1 GiB upload).
      partSize: PART_SIZE,
      queueSize: 2,
    });
    await upload.done();
    return measure.result();
  } catch (err) {
    throw new StoreError(`uploading to ${describe(loc)}: ${storeMessage(err)}`);
  } finally {
    client.destroy();
  }
}

/** The object's body as a stream (the caller consumes it); errors name the location. */
export async function openObject(
  loc: StoreLocation,
  creds: StoreCredentials | undefined,
): Promise<{ body: Readable; size?: number; close(): void }> {
  const client = storeClient(loc, creds);
  try {
    if (loc.createBucketIfNotPresent) await ensureBucket(client, loc);
    const reply = await client.send(new GetObjectCommand({ Bucket: loc.bucket, Key: loc.key }));
    if (!reply.Body) throw new Error('the reply has no body');
    return {
      body: reply.Body as Readable,
      ...(reply.ContentLength !== undefined ? { size: reply.ContentLength } : {}),
      close: () => client.destroy(),
    };
  } catch (err) {
    client.destroy();
    throw new StoreError(`downloading ${describe(loc)}: ${storeMessage(err)}`);
  }
}

export async function listPrefix(
  loc: StoreLocation,
  creds: StoreCredentials | undefined,
  prefix: string,
): Promise<Array<{ key: string; rel: string }>> {
  const client = storeClient(loc, creds);
  const out: Array<{ key: string; rel: string }> = [];
  try {
    // A data template listing a bucket it may create lists a new, empty one instead of failing.
    if (loc.createBucketIfNotPresent) await ensureBucket(client, loc);
    let token: string | undefined;
    do {
      const page = await client.send(new ListObjectsV2Command({ Bucket: loc.bucket, Prefix: prefix, ContinuationToken: token }));
      for (const o of page.Contents ?? [])
        if (o.Key && o.Key.length > prefix.length) out.push({ key: o.Key, rel: o.Key.slice(prefix.length) });
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  } catch (err) {
    throw new StoreError(`listing ${describe({ ...loc, key: prefix })}: ${storeMessage(err)}`);
  } finally {
    client.destroy();
  }
  return out;
}

/** Deletes the object (deleting what is already gone is not an error). */
export async function deleteObject(loc: StoreLocation, creds: StoreCredentials | undefined): Promise<void> {
  const client = storeClient(loc, creds);
  try {
    await client.send(new DeleteObjectCommand({ Bucket: loc.bucket, Key: loc.key }));
  } catch (err) {
    throw new StoreError(`deleting ${describe(loc)}: ${storeMessage(err)}`);
  } finally {
    client.destroy();
  }
}

/** Downloads the object into `file`. */
export async function downloadFile(loc: StoreLocation, creds: StoreCredentials | undefined, file: string): Promise<void> {
  const obj = await openObject(loc, creds);
  try {
    await pipeline(obj.body, createWriteStream(file, { mode: 0o600 }));
  } catch (err) {
    throw new StoreError(`downloading ${describe(loc)}: ${storeMessage(err)}`);
  } finally {
    obj.close();
  }
}

async function ensureBucket(client: S3Client, loc: StoreLocation): Promise<void> {
  try {
    await client.send(new HeadBucketCommand({ Bucket: loc.bucket }));
  } catch (err) {
    if (statusOf(err) !== 404) throw err;
    try {
      await client.send(new CreateBucketCommand({ Bucket: loc.bucket }));
    } catch (createErr) {
      const name = (createErr as { name?: string }).name;
      if (name !== 'BucketAlreadyOwnedByYou' && name !== 'BucketAlreadyExists') throw createErr;
    }
  }
}

function statusOf(err: unknown): number | undefined {
  return (err as { $metadata?: { httpStatusCode?: number } })?.$metadata?.httpStatusCode;
}

/** What went wrong, in words a user can act on (the SDK's error names are terse). */
export function storeMessage(err: unknown): string {
  const name = (err as { name?: string })?.name ?? '';
  const status = statusOf(err);
  const hints: Record<string, string> = {
    NoSuchBucket: 'the bucket does not exist (create it, or set createBucketIfNotPresent)',
    NoSuchKey: NO_SUCH_OBJECT,
    NotFound: 'not found',
    InvalidAccessKeyId: 'the access key is not known to the object store (check the accessKeySecret)',
    SignatureDoesNotMatch: 'the secret key is wrong (check the secretKeySecret)',
    AccessDenied: 'access denied (the credentials may not do this)',
  };
  const hint = hints[name];
  const msg = (err as Error)?.message ?? String(err);
  const attempts = (err as { $metadata?: { attempts?: number } })?.$metadata?.attempts;
  // Only failures worth retrying were retried: say so, the store may just have been unreachable a while.
  const tried = attempts !== undefined && attempts > 1 ? ` (gave up after ${attempts} attempts)` : '';
  if (hint) return `${hint} (${name}${status ? `, HTTP ${status}` : ''})${tried}`;
  if (timedOut(err)) return `no answer (${msg}; the store accepts no connection or does not reply)${tried}`;
  return `${msg}${status ? ` (HTTP ${status})` : ''}${tried}`;
}

function timedOut(err: unknown): boolean {
  const e = err as { name?: string; code?: string };
  return e?.name === 'TimeoutError' || e?.code === 'ETIMEDOUT';
}
