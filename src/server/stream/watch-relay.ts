/**
 * Relays a watch of the API server onto an open stream until the caller goes away: each event is
 * turned into what to send (`prepare`, started at once so a slow one — a workflow whose nodes are
 * read from the database — does not hold the watch) and sent in the watch's order. When the API
 * server ends a watch (its timeout) it is watched again from the last version seen; an ERROR event
 * ends the stream (re-watching at once could spin), 410 saying the version expired; a failed watch
 * ends it with the API server's status (503 when it gave none). `what` names the objects in errors.
 */
import type { KubeClient } from '../../kube/client.js';
import { ApiError } from '../../kube/errors.js';
import type { WatchEvent } from '../../kube/request-options.js';
import type { ResourceType } from '../../kube/resource.js';
import { errorMessage } from '../../log/error-message.js';
import type { SseStream } from './sse.js';

/** How long one watch of the API server lasts before the stream re-watches (it picks up where it was). */
export const WATCH_SECONDS = 300;

export interface WatchRelay {
  client: KubeClient;
  type: ResourceType;
  query: { namespace?: string; labelSelector?: string; fieldSelector?: string };
  /** The resourceVersion to watch from (the list's, sent before). */
  version?: string;
  sse: SseStream;
  what: string;
  /** What to send for an event, or undefined to send nothing (BOOKMARKs never reach it). */
  prepare(type: WatchEvent['type'], object: unknown): unknown;
}

export async function relayWatch(r: WatchRelay): Promise<void> {
  const { sse } = r;
  let version = r.version;
  while (sse.open) {
    let failure: { code: number; message: string } | undefined;
    let sent = Promise.resolve();
    const onEvent = (e: WatchEvent) => {
      if (e.type === 'ERROR') {
        const status = e.object as { code?: number; message?: string };
        failure = { code: status.code ?? 500, message: status.message ?? 'the watch failed' };
        return;
      }
      const rv = (e.object as { metadata?: { resourceVersion?: string } }).metadata?.resourceVersion;
      if (rv) version = rv;
      if (e.type === 'BOOKMARK') return;
      const ready = Promise.resolve(r.prepare(e.type, e.object));
      sent = sent.then(async () => {
        const message = await ready;
        if (message !== undefined) sse.send(message);
      });
    };
    try {
      await r.client.watch(
        r.type,
        { ...r.query, resourceVersion: version, timeoutSeconds: WATCH_SECONDS, allowWatchBookmarks: true },
        onEvent,
        sse.signal,
      );
      await sent;
    } catch (err) {
      const code = err instanceof ApiError && err.code !== 0 ? err.code : 503;
      if (sse.open) sse.fail(code, `watching ${r.what}: ${errorMessage(err)}`);
      return;
    }
    if (failure?.code === 410) sse.fail(410, 'the watch fell too far behind the API server (410 Gone): reconnect to list again');
    else if (failure) sse.fail(failure.code, `watching ${r.what}: ${failure.message}`);
  }
}
