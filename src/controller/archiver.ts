/**
 * Writes finished workflows to the archive (src/archive) before anything may delete them.
 *
 * While the archive is on, every workflow carries the finalizer `workflows.plugflow.io/archive`
 * from its first status on, so neither a TTL, a podGC-driven cleanup nor a `kubectl delete`
 * removes it before it is archived. Once it has finished it is written (once: the store ignores a
 * second write of the same uid, so a controller killed between the write and the label loses and
 * duplicates nothing), then labelled `workflows.plugflow.io/workflow-archiving-status: Archived`
 * and the finalizer dropped. A workflow deleted before it finished is let go unarchived.
 *
 * A database that does not answer delays archiving, never loses a workflow: the finalizer holds
 * it, the write is tried again with a growing pause (1 s doubling to 60 s), the failure is logged
 * once per outage, counted, and reported by /readyz until a write succeeds.
 */
import { FINAL_WORKFLOW_PHASES, LABEL_PREFIX, type Workflow } from '../api/index.js';
import type { ArchiveStore } from '../archive/archive-store.js';
import type { KubeClient } from '../kube/client.js';
import { isNotFound } from '../kube/errors.js';
import { WORKFLOWS } from '../kube/resource.js';
import { errorMessage } from '../log/error-message.js';
import type { Logger } from '../log/logger.js';
import type { Obj } from './features/feature.js';
import type { ControllerMetrics } from './metrics.js';

export const ARCHIVE_FINALIZER = `${LABEL_PREFIX}archive`;
export const LABEL_ARCHIVING_STATUS = `${LABEL_PREFIX}workflow-archiving-status`;

const FIRST_PAUSE_MS = 1000;
const LONGEST_PAUSE_MS = 60_000;

export interface ArchiverDeps {
  store: ArchiveStore;
  client: KubeClient;
  log: Logger;
  metrics: ControllerMetrics;
  /** Retention: archived workflows finished longer ago than this are removed (ms; default: kept). */
  ttlMs?: number;
  /** Retention: in each namespace only the newest this many are kept (default: all). */
  keepPerNamespace?: number;
  /** The uid of a namespace as the controller's cache has it (archived rows carry it). */
  namespaceUid?: (namespace: string) => string | undefined;
}

/** How often retention runs. */
export const PRUNE_EVERY_MS = 10 * 60_000;

export class Archiver {
  private failingSince?: number;
  private lastError?: string;
  private pause = FIRST_PAUSE_MS;

  constructor(private readonly deps: ArchiverDeps) {}

  /** Applies the retention once (the controller runs it every PRUNE_EVERY_MS); returns how many were removed. */
  async prune(): Promise<number> {
    const { ttlMs, keepPerNamespace } = this.deps;
    if (ttlMs === undefined && keepPerNamespace === undefined) return 0;
    try {
      const removed = await this.deps.store.prune({
        ...(ttlMs !== undefined ? { olderThan: new Date(Date.now() - ttlMs) } : {}),
        ...(keepPerNamespace !== undefined ? { keepPerNamespace } : {}),
      });
      if (removed > 0) this.deps.log.info('archive retention removed workflows', { removed, ttlMs, keepPerNamespace });
      this.deps.metrics.archivePruned.inc(removed);
      return removed;
    } catch (err) {
      this.deps.log.warn('archive retention could not run; it runs again later', { error: errorMessage(err) });
      return 0;
    }
  }

  /**
   * A namespace was deleted: its archived workflows go with it, so a namespace made later under
   * the same name (another team's, perhaps) never sees them.
   */
  async namespaceDeleted(namespace: string, uid: string | undefined): Promise<void> {
    if (!uid) return;
    try {
      const removed = await this.deps.store.purgeNamespace(namespace, uid);
      if (removed > 0) this.deps.log.info('removed the archived workflows of a deleted namespace', { namespace, removed });
    } catch (err) {
      // The sweep (purgeGone) removes them later.
      this.deps.log.warn('could not remove the archived workflows of a deleted namespace; the next sweep does', {
        namespace,
        error: errorMessage(err),
      });
    }
  }

  /**
   * The deletions a stopped controller missed: archived workflows of namespaces that are gone, or
   * that are another namespace now (same name, new uid). `live`: every namespace there is, with
   * its uid; `scope`: the namespaces this controller watches, when not all.
   */
  async purgeGone(live: ReadonlyMap<string, string>, scope?: readonly string[]): Promise<number> {
    // An empty view (a cache not filled, a namespace-scoped watch of a namespace just deleted)
    // would read as "every namespace is gone": nothing is removed on it.
    if (live.size === 0) return 0;
    try {
      const removed = await this.deps.store.purgeGoneNamespaces(live, scope);
      if (removed > 0) this.deps.log.info('removed archived workflows whose namespace is gone', { removed });
      return removed;
    } catch (err) {
      this.deps.log.warn('could not sweep the archived workflows of deleted namespaces; tried again later', { error: errorMessage(err) });
      return 0;
    }
  }

  /** Why archiving is behind, for /readyz (undefined while writes succeed). */
  readinessProblem(): string | undefined {
    return this.failingSince === undefined
      ? undefined
      : `the workflow archive cannot be written since ${new Date(this.failingSince).toISOString()}: ${this.lastError}`;
  }

  /** Whether the workflow must be held by the archive's finalizer (it is not archived yet). */
  holds(wf: Obj<Workflow>): boolean {
    return !archived(wf);
  }

  /**
   * Archives a finished workflow not archived yet, labels it and lets it go; a deleted unfinished
   * one is let go. Returns when to try again after a failure (ms since the epoch).
   */
  async settle(wf: Obj<Workflow>): Promise<number | undefined> {
    const finished = FINAL_WORKFLOW_PHASES.includes(wf.status?.phase ?? '');
    if (archived(wf) && !wf.metadata.finalizers?.includes(ARCHIVE_FINALIZER)) return undefined;
    if (!finished && !wf.metadata.deletionTimestamp) return undefined;
    if (finished && !archived(wf)) {
      try {
        const result = await this.deps.store.archive(wf, this.deps.namespaceUid?.(wf.metadata.namespace ?? ''));
        this.deps.metrics.archiveWrites.inc({ result });
        this.recovered();
      } catch (err) {
        return this.failed(wf, err);
      }
    }
    try {
      const finalizers = (wf.metadata.finalizers ?? []).filter((f) => f !== ARCHIVE_FINALIZER);
      await this.deps.client.mergePatch(WORKFLOWS, wf.metadata.namespace, wf.metadata.name!, {
        metadata: {
          resourceVersion: wf.metadata.resourceVersion,
          ...(finished ? { labels: { [LABEL_ARCHIVING_STATUS]: 'Archived' } } : {}),
          finalizers: finalizers.length ? finalizers : null,
        },
      });
    } catch (err) {
      // Gone, or changed meanwhile: the next reconcile sees the newer object (the write is idempotent).
      if (!isNotFound(err)) return Date.now() + FIRST_PAUSE_MS;
    }
    return undefined;
  }

  private failed(wf: Obj<Workflow>, err: unknown): number {
    this.deps.metrics.archiveWrites.inc({ result: 'failed' });
    this.lastError = errorMessage(err);
    if (this.failingSince === undefined) {
      this.failingSince = Date.now();
      this.deps.log.error('the workflow archive cannot be written; finished workflows wait (held by their finalizer)', {
        namespace: wf.metadata.namespace,
        workflow: wf.metadata.name,
        error: this.lastError,
      });
    }
    const at = Date.now() + this.pause;
    this.pause = Math.min(this.pause * 2, LONGEST_PAUSE_MS);
    return at;
  }

  private recovered(): void {
    if (this.failingSince !== undefined)
      this.deps.log.info('the workflow archive is written again', { downForMs: Date.now() - this.failingSince });
    this.failingSince = undefined;
    this.lastError = undefined;
    this.pause = FIRST_PAUSE_MS;
  }
}

function archived(wf: Obj<Workflow>): boolean {
  return wf.metadata.labels?.[LABEL_ARCHIVING_STATUS] === 'Archived';
}
