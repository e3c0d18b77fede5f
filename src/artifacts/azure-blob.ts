/**
 * The blob-store driver (Azure Blob Storage protocol, `vendorB`), on the official SDK
 * (@azure/storage-blob): uploads stream a file as blocks (8 MiB, two in flight: the wait side's
 * memory stays flat), downloads stream the blob to a file. Tested against Azurite.
 *
 * The account is the endpoint's: `https://ACCOUNT.blob.core.windows.net` or, for emulators and
 * path-style endpoints, `http://host:port/ACCOUNT`. With `accountKeySecret` requests are signed
 * with that account's shared key; without it they are anonymous (a public container).
 */
import { createReadStream, createWriteStream } from 'node:fs';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { BlobServiceClient, StorageSharedKeyCredential, type ContainerClient } from '@azure/storage-blob';
import { describeStored, type BlobLocation } from './plan.js';
import { StoreError } from './store-error.js';
import { measuring } from './digest.js';

const BLOCK_SIZE = 8 * 1024 * 1024;

/** `blob://container/blob at endpoint`, never credentials. */
export function describeBlob(loc: BlobLocation): string {
  return describeStored(loc);
}

/** The account name an endpoint addresses (see the module comment). */
export function accountOf(endpoint: string): string {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw new StoreError(`the blob endpoint ${JSON.stringify(endpoint)} is not a URL (https://ACCOUNT.blob.core.windows.net)`);
  }
  const first = url.pathname.split('/').filter(Boolean)[0];
  if (first) return first;
  const host = url.hostname.split('.')[0];
  if (host && !/^\d+$/.test(host) && url.hostname.includes('.')) return host;
  throw new StoreError(
    `the blob endpoint ${endpoint} names no account (https://ACCOUNT.blob.core.windows.net or http://host:port/ACCOUNT)`,
  );
}

function container(loc: BlobLocation, accountKey: string | undefined): ContainerClient {
  const endpoint = loc.endpoint.replace(/\/+$/, '');
  const service = accountKey
    ? new BlobServiceClient(endpoint, new StorageSharedKeyCredential(accountOf(endpoint), accountKey), { retryOptions: { maxTries: 5 } })
    : new BlobServiceClient(endpoint, undefined, { retryOptions: { maxTries: 5 } });
  return service.getContainerClient(loc.container);
}

/** Uploads `file` as the blob; returns its size and sha256 (computed while streaming). */
export async function uploadBlobFile(
  loc: BlobLocation,
  accountKey: string | undefined,
  file: string,
): Promise<{ size: number; sha256: string }> {
  const measure = measuring();
  const counted = createReadStream(file).pipe(measure.through);
  try {
    await container(loc, accountKey).getBlockBlobClient(loc.blob).uploadStream(counted, BLOCK_SIZE, 2);
  } catch (err) {
    throw new StoreError(`uploading to ${describeBlob(loc)}: ${blobMessage(err)}`);
  }
  return measure.result();
}

/** The blob's body as a stream (the caller consumes it); errors name the location. */
export async function openBlob(
  loc: BlobLocation,
  accountKey: string | undefined,
): Promise<{ body: Readable; size?: number; close(): void }> {
  try {
    const reply = await container(loc, accountKey).getBlobClient(loc.blob).download();
    if (!reply.readableStreamBody) throw new Error('the reply has no body');
    const body = reply.readableStreamBody as Readable;
    return { body, ...(reply.contentLength !== undefined ? { size: reply.contentLength } : {}), close: () => body.destroy() };
  } catch (err) {
    throw new StoreError(`downloading ${describeBlob(loc)}: ${blobMessage(err)}`);
  }
}

export async function downloadBlobFile(loc: BlobLocation, accountKey: string | undefined, file: string): Promise<void> {
  const obj = await openBlob(loc, accountKey);
  try {
    await pipeline(obj.body, createWriteStream(file, { mode: 0o600 }));
  } catch (err) {
    throw new StoreError(`downloading ${describeBlob(loc)}: ${blobMessage(err)}`);
  } finally {
    obj.close();
  }
}

/** The blobs under `prefix`, with their names relative to it. */
export async function listBlobs(
  loc: BlobLocation,
  accountKey: string | undefined,
  prefix: string,
): Promise<Array<{ key: string; rel: string }>> {
  const out: Array<{ key: string; rel: string }> = [];
  try {
    for await (const b of container(loc, accountKey).listBlobsFlat({ prefix }))
      if (b.name.length > prefix.length) out.push({ key: b.name, rel: b.name.slice(prefix.length) });
  } catch (err) {
    throw new StoreError(`listing ${describeBlob({ ...loc, blob: prefix })}: ${blobMessage(err)}`);
  }
  return out;
}

/** Deletes the blob if it exists; returns whether it did. */
export async function deleteBlob(loc: BlobLocation, accountKey: string | undefined): Promise<boolean> {
  try {
    return (await container(loc, accountKey).getBlobClient(loc.blob).deleteIfExists()).succeeded;
  } catch (err) {
    throw new StoreError(`deleting ${describeBlob(loc)}: ${blobMessage(err)}`);
  }
}

/** What went wrong, in words a user can act on. */
export function blobMessage(err: unknown): string {
  const e = err as { code?: string; statusCode?: number; message?: string };
  const hints: Record<string, string> = {
    ContainerNotFound: 'the container does not exist (create it first)',
    BlobNotFound: 'no object has that key',
    AuthenticationFailed: 'the account key is wrong (check the accountKeySecret)',
    AuthorizationFailure: 'access denied (check the accountKeySecret: the key may be wrong, or may not do this)',
    ResourceNotFound: 'not found (is the account in the endpoint right?)',
  };
  const hint = e?.code ? hints[e.code] : undefined;
  if (hint) return `${hint} (${e.code}${e.statusCode ? `, HTTP ${e.statusCode}` : ''})`;
  const first = (e?.message ?? String(err)).split('\n')[0];
  return `${first}${e?.statusCode ? ` (HTTP ${e.statusCode})` : ''}`;
}
