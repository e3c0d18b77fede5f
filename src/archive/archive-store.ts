/**
 * The workflow archive on PostgreSQL (client: `pg`). A finished workflow is written once, in one
 * transaction: its row (the columns lists filter and sort on), its labels and its nodes. Writing
 * the same workflow again (a controller restarted mid-archive, two controllers) changes nothing:
 * the uid is the primary key, and a second write reports `already`.
 *
 * Reads never see a half-written workflow (one transaction), page by (finished_at, uid) so a deep
 * page costs what the first does, and count exactly with the same filter. Who may read which
 * namespace is decided by the caller of this store (the server, with the caller's rights).
 */
import pg from 'pg';
import { inflateStatus, type NodeStatus, type Workflow } from '../api/index.js';
import { LABEL_CRON_WORKFLOW, LABEL_PHASE } from '../api/index.js';
import { encodeCursor, pageQuery, whereClause, type ArchiveFilter, type PageRequest } from './archive-query.js';
import { MIGRATIONS } from './migrations.js';
import { NodeStatusStore } from './node-status-store.js';

/** A list entry: what a list page shows, without spec or nodes. */
export interface ArchivedSummary {
  uid: string;
  namespace: string;
  name: string;
  phase: string;
  startedAt?: string;
  finishedAt: string;
  labels: Record<string, string>;
  workflowTemplate?: string;
  cronWorkflow?: string;
  message?: string;
  progress?: string;
  nodeCount: number;
  archivedAt: string;
}

export interface ArchivePage {
  items: ArchivedSummary[];
  /** The cursor of the next page; absent on the last. */
  continue?: string;
}

export interface ArchiveStoreOptions {
  /** Most connections (default 8). */
  connections?: number;
  /**
   * Longest a statement may run on the server before PostgreSQL cancels it (default 30 s): no
   * caller's list, count or read holds a connection longer. Migrations lift it for themselves.
   */
  statementTimeoutMs?: number;
}

export const DEFAULT_STATEMENT_TIMEOUT_MS = 30_000;

/** Nodes per page a reader holds (nodePages). */
const NODE_PAGE = 2000;
const UID = /^[0-9a-f-]{36}$/;
/** Nodes per INSERT statement: a 100,000-node workflow is 100 statements in its one transaction. */
const NODE_BATCH = 1000;
/** Serializes migrations between controllers starting together. */
const MIGRATION_LOCK = 0x706c7567; // "plug"

const SUMMARY_COLUMNS =
  'w.uid, w.namespace, w.name, w.phase, w.started_at, w.finished_at, w.workflow_template, w.cron_workflow, w.message, w.progress, w.node_count, w.archived_at, w.metadata';

/** Most label keys, or values of one key, one answer lists (a bound on a tenant's request). */
export const MAX_LABEL_ANSWERS = 10_000;

export class ArchiveStore {
  /** The schema brought up to date, once; forgotten after a failure so the next use tries again. */
  private schema?: Promise<void>;

  private constructor(private readonly pool: pg.Pool) {}

  /**
   * A store on the database at `url`. Nothing is asked of the database yet: the schema is brought
   * up to date on first use, so a controller starts (and reports the archive as not ready) while
   * the database is down.
   */
  static open(url: string, opts: ArchiveStoreOptions = {}): ArchiveStore {
    const pool = new pg.Pool({
      connectionString: url,
      max: opts.connections ?? 8,
      connectionTimeoutMillis: 10_000,
      statement_timeout: opts.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS,
    });
    // A client losing its server (a restart, a kill) is an error event, not a crash: idle ones
    // through the pool's event, checked-out ones through their own (the pool listens only while
    // a client is idle; the query in flight fails with the same error and its caller retries).
    pool.on('error', () => {});
    pool.on('connect', (client) => client.on('error', () => {}));
    return new ArchiveStore(pool);
  }

  /** Brings the schema up to date (at most once per store; again after a failure). */
  ready(): Promise<void> {
    this.schema ??= migrate(this.pool).catch((err: unknown) => {
      this.schema = undefined;
      throw err;
    });
    return this.schema;
  }

  /** The offloaded node status of live workflows, on the same database and connections. */
  nodeStatus(keepSupersededMs?: number): NodeStatusStore {
    return new NodeStatusStore(this.pool, () => this.ready(), keepSupersededMs);
  }

  /**
   * Writes a finished workflow once; `already` when it was archived before. `namespaceUid`, the
   * uid of its namespace, ties the row to that namespace and not to a later one of the same name.
   */
  async archive(wf: Workflow, namespaceUid?: string): Promise<'archived' | 'already'> {
    return (await this.archiveMany([wf], namespaceUid === undefined ? undefined : () => namespaceUid))[0]!;
  }

  /**
   * Writes finished workflows in one transaction (a batch: the bench, a controller catching up):
   * each is `archived`, or `already` when it was archived before. Rows, labels and nodes go in
   * with one statement each per batch (`unnest` of arrays), nodes in slices of NODE_BATCH.
   */
  async archiveMany(
    workflows: readonly Workflow[],
    namespaceUid?: (namespace: string) => string | undefined,
  ): Promise<('archived' | 'already')[]> {
    const all = workflows.map(toRow);
    // The same workflow twice in one batch is written once (the later copies are `already`).
    const seen = new Set<string>();
    const rows = all.filter((r) => !seen.has(r.uid) && seen.add(r.uid));
    await this.ready();
    const client = await this.pool.connect();
    try {
      await client.query('begin');
      const inserted = await client.query(
        `insert into archived_workflows (uid, namespace, name, phase, started_at, finished_at, workflow_template, cron_workflow, creator,
           message, progress, node_count, metadata, spec, status, namespace_uid)
         select * from unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::timestamptz[], $6::timestamptz[], $7::text[], $8::text[],
           $9::text[], $10::text[], $11::text[], $12::integer[], $13::jsonb[], $14::jsonb[], $15::jsonb[], $16::uuid[])
         on conflict (uid) do nothing
         returning uid`,
        [
          rows.map((r) => r.uid),
          rows.map((r) => r.namespace),
          rows.map((r) => r.name),
          rows.map((r) => r.phase),
          rows.map((r) => r.startedAt),
          rows.map((r) => r.finishedAt),
          rows.map((r) => r.template),
          rows.map((r) => r.cron),
          rows.map((r) => r.creator),
          rows.map((r) => r.message),
          rows.map((r) => r.progress),
          rows.map((r) => r.nodeIds.length),
          rows.map((r) => JSON.stringify(r.metadata)),
          rows.map((r) => JSON.stringify(r.spec)),
          rows.map((r) => JSON.stringify(r.status)),
          rows.map((r) => namespaceUid?.(r.namespace) ?? null),
        ],
      );
      const fresh = new Set((inserted.rows as { uid: string }[]).map((r) => r.uid));
      const written = rows.filter((r) => fresh.has(r.uid));
      const labels = written.flatMap((r) => Object.entries(r.labels).map(([k, v]) => [r.uid, k, v] as const));
      if (labels.length > 0)
        await client.query(
          'insert into archived_workflow_labels (uid, key, value) select * from unnest($1::uuid[], $2::text[], $3::text[])',
          [labels.map((l) => l[0]), labels.map((l) => l[1]), labels.map((l) => l[2])],
        );
      const nodes = written.flatMap((r) => r.nodeIds.map((id) => [r.uid, id, r.nodes[id]] as const));
      for (let i = 0; i < nodes.length; i += NODE_BATCH) {
        const slice = nodes.slice(i, i + NODE_BATCH);
        await client.query(
          'insert into archived_workflow_nodes (uid, id, node) select * from unnest($1::uuid[], $2::text[], $3::jsonb[])',
          [slice.map((n) => n[0]), slice.map((n) => n[1]), slice.map((n) => JSON.stringify(n[2]))],
        );
      }
      await client.query('commit');
      return all.map((r) => (fresh.delete(r.uid) ? 'archived' : 'already'));
    } catch (err) {
      await client.query('rollback').catch(() => {});
      throw err;
    } finally {
      client.release();
    }
  }

  /** One page, newest finished first. */
  async list(filter: ArchiveFilter, page: PageRequest): Promise<ArchivePage> {
    const q = pageQuery(SUMMARY_COLUMNS, filter, page);
    await this.ready();
    const rows = (await this.pool.query(q.sql, q.params)).rows as Row[];
    const items = rows.slice(0, page.limit).map(summary);
    const last = items.at(-1);
    return rows.length > page.limit && last ? { items, continue: encodeCursor({ t: last.finishedAt, uid: last.uid }) } : { items };
  }

  /**
   * The label keys of the archived workflows (of `namespaces`, when given), sorted; at most
   * MAX_LABEL_ANSWERS (the peer's `archived-workflows-label-keys`).
   */
  async labelKeys(namespaces?: readonly string[]): Promise<string[]> {
    await this.ready();
    const r = namespaces
      ? await this.pool.query(
          'select distinct l.key from archived_workflow_labels l join archived_workflows w using (uid) where w.namespace = any($1) order by 1 limit $2',
          [namespaces, MAX_LABEL_ANSWERS],
        )
      : await this.pool.query('select distinct key from archived_workflow_labels order by 1 limit $1', [MAX_LABEL_ANSWERS]);
    return (r.rows as { key: string }[]).map((row) => row.key);
  }

  /** The values one label key has on archived workflows (of `namespaces`, when given), sorted; at most MAX_LABEL_ANSWERS. */
  async labelValues(key: string, namespaces?: readonly string[]): Promise<string[]> {
    await this.ready();
    const r = namespaces
      ? await this.pool.query(
          'select distinct l.value from archived_workflow_labels l join archived_workflows w using (uid) where l.key = $1 and w.namespace = any($2) order by 1 limit $3',
          [key, namespaces, MAX_LABEL_ANSWERS],
        )
      : await this.pool.query('select distinct value from archived_workflow_labels where key = $1 order by 1 limit $2', [
          key,
          MAX_LABEL_ANSWERS,
        ]);
    return (r.rows as { value: string }[]).map((row) => row.value);
  }

  /** The exact number of archived workflows the filter selects. */
  async count(filter: ArchiveFilter): Promise<number> {
    const { sql, params } = whereClause(filter);
    await this.ready();
    const r = await this.pool.query(`select count(*)::bigint as n from archived_workflows w where ${sql}`, params);
    return Number((r.rows[0] as { n: string }).n);
  }

  /** The archived workflow as it was when it finished, nodes included; undefined when not archived. */
  async get(uid: string): Promise<Workflow | undefined> {
    const head = await this.head(uid);
    if (!head) return undefined;
    const nodes: Record<string, NodeStatus> = Object.create(null) as Record<string, NodeStatus>;
    for await (const page of this.nodePages(uid)) for (const [id, json] of page) nodes[id] = JSON.parse(json) as NodeStatus;
    return { ...head, status: { ...head.status, ...(Object.keys(nodes).length > 0 ? { nodes } : {}) } } as Workflow;
  }

  /** The archived workflow without its nodes (their number is in `nodeCount` of `locate`). */
  async head(uid: string): Promise<Workflow | undefined> {
    if (!UID.test(uid)) return undefined;
    await this.ready();
    const r = await this.pool.query('select metadata, spec, status from archived_workflows where uid = $1', [uid]);
    const row = r.rows[0] as { metadata: Workflow['metadata']; spec: Workflow['spec']; status: Workflow['status'] } | undefined;
    if (!row) return undefined;
    return { apiVersion: 'plugflow.io/v1alpha1', kind: 'Workflow', metadata: row.metadata, spec: row.spec, status: row.status } as Workflow;
  }

  /**
   * An archived workflow's nodes, `pageSize` at a time in id order, each as its JSON text: a
   * reader holds one page, however many nodes the workflow has (keyset paging on the primary key).
   */
  async *nodePages(uid: string, pageSize = NODE_PAGE): AsyncIterable<[id: string, json: string][]> {
    if (!UID.test(uid)) return;
    await this.ready();
    let after = '';
    for (;;) {
      const r = await this.pool.query(
        'select id, node::text as json from archived_workflow_nodes where uid = $1 and id > $2 order by id limit $3',
        [uid, after, pageSize],
      );
      const rows = r.rows as { id: string; json: string }[];
      if (rows.length > 0) yield rows.map((row) => [row.id, row.json]);
      if (rows.length < pageSize) return;
      after = rows.at(-1)!.id;
    }
  }

  /** Where an archived workflow is and how large: its namespace (for the caller's rights) and node count. */
  async locate(uid: string): Promise<{ namespace: string; nodeCount: number } | undefined> {
    if (!UID.test(uid)) return undefined;
    await this.ready();
    const r = await this.pool.query('select namespace, node_count from archived_workflows where uid = $1', [uid]);
    const row = r.rows[0] as { namespace: string; node_count: number } | undefined;
    return row && { namespace: row.namespace, nodeCount: row.node_count };
  }

  /** The namespace of an archived workflow (the server checks the caller's rights on it first). */
  async namespaceOf(uid: string): Promise<string | undefined> {
    return (await this.locate(uid))?.namespace;
  }

  async delete(uid: string): Promise<boolean> {
    if (!UID.test(uid)) return false;
    await this.ready();
    return ((await this.pool.query('delete from archived_workflows where uid = $1', [uid])).rowCount ?? 0) > 0;
  }

  /**
   * Retention: removes workflows finished before `olderThan`, and in each namespace all but the
   * newest `keepPerNamespace`. Returns how many were removed.
   */
  async prune(opts: { olderThan?: Date; keepPerNamespace?: number }): Promise<number> {
    await this.ready();
    let removed = 0;
    if (opts.olderThan)
      removed += (await this.pool.query('delete from archived_workflows where finished_at < $1', [opts.olderThan])).rowCount ?? 0;
    if (opts.keepPerNamespace !== undefined)
      removed +=
        (
          await this.pool.query(
            `delete from archived_workflows w using (
               select uid from (
                 select uid, row_number() over (partition by namespace order by finished_at desc, uid desc) as n from archived_workflows
               ) ranked where n > $1
             ) old where w.uid = old.uid`,
            [opts.keepPerNamespace],
          )
        ).rowCount ?? 0;
    return removed;
  }

  /**
   * Removes the archived workflows of a namespace that was deleted (`uid`: the deleted one's; rows
   * archived before uids were kept go too). Returns how many were removed.
   */
  async purgeNamespace(namespace: string, uid: string): Promise<number> {
    await this.ready();
    const r = await this.pool.query(
      'delete from archived_workflows where namespace = $1 and (namespace_uid = $2 or namespace_uid is null)',
      [namespace, uid],
    );
    return r.rowCount ?? 0;
  }

  /**
   * Removes the archived workflows whose namespace is gone, or is another namespace now (same
   * name, another uid): the deletions a stopped controller did not see. `live` maps each namespace
   * that exists to its uid; `scope` limits the sweep to these namespaces (a controller that watches
   * only some). Returns how many were removed.
   */
  async purgeGoneNamespaces(live: ReadonlyMap<string, string>, scope?: readonly string[]): Promise<number> {
    await this.ready();
    const r = await this.pool.query(
      `delete from archived_workflows w
        where ($3::text[] is null or w.namespace = any($3))
          and not exists (
            select 1 from unnest($1::text[], $2::uuid[]) as l(namespace, uid)
             where l.namespace = w.namespace and (w.namespace_uid is null or w.namespace_uid = l.uid))`,
      [[...live.keys()], [...live.values()], scope ?? null],
    );
    return r.rowCount ?? 0;
  }

  /** Whether the database answers (for /readyz). */
  async ping(): Promise<void> {
    await this.ready();
    await this.pool.query('select 1');
  }

  close(): Promise<void> {
    return this.pool.end();
  }
}

interface Row {
  uid: string;
  namespace: string;
  name: string;
  phase: string;
  started_at: Date | null;
  finished_at: Date;
  workflow_template: string | null;
  cron_workflow: string | null;
  message: string | null;
  progress: string | null;
  node_count: number;
  archived_at: Date;
  metadata: { labels?: Record<string, string> };
}

function summary(r: Row): ArchivedSummary {
  return {
    uid: r.uid,
    namespace: r.namespace,
    name: r.name,
    phase: r.phase,
    ...(r.started_at ? { startedAt: r.started_at.toISOString() } : {}),
    finishedAt: r.finished_at.toISOString(),
    labels: r.metadata.labels ?? {},
    ...(r.workflow_template ? { workflowTemplate: r.workflow_template } : {}),
    ...(r.cron_workflow ? { cronWorkflow: r.cron_workflow } : {}),
    ...(r.message ? { message: r.message } : {}),
    ...(r.progress ? { progress: r.progress } : {}),
    nodeCount: r.node_count,
    archivedAt: r.archived_at.toISOString(),
  };
}

/** What one workflow becomes in the archive's tables; refuses one that is not stored or not finished. */
function toRow(wf: Workflow) {
  const md = wf.metadata ?? {};
  const uid = md.uid;
  if (!uid || !md.namespace || !md.name) throw new Error('only a stored workflow (with uid, namespace and name) can be archived');
  const status = inflateStatus(wf.status ?? {}, `workflow ${md.namespace}/${md.name}`);
  if (!status.finishedAt || !status.phase)
    throw new Error(`workflow ${md.namespace}/${md.name} has not finished: only finished workflows are archived`);
  // The version of offloaded nodes means nothing in the archive, which holds them all.
  const { nodes = {}, offloadNodeStatusVersion: _version, ...rest } = status;
  // The phase label follows the status a moment later: archived, it says how the workflow ended.
  const labels: Record<string, string> = {
    ...(md.labels ?? {}),
    ...(md.labels?.[LABEL_PHASE] !== undefined ? { [LABEL_PHASE]: status.phase } : {}),
  };
  return {
    uid,
    namespace: md.namespace,
    name: md.name,
    phase: status.phase,
    startedAt: status.startedAt ?? null,
    finishedAt: status.finishedAt,
    template: wf.spec?.workflowTemplateRef?.name ?? null,
    cron: labels[LABEL_CRON_WORKFLOW] ?? null,
    creator: labels['workflows.plugflow.io/creator'] ?? null,
    message: status.message ?? null,
    progress: status.progress ?? null,
    labels,
    nodes,
    nodeIds: Object.keys(nodes),
    metadata: {
      name: md.name,
      namespace: md.namespace,
      uid,
      labels,
      annotations: md.annotations ?? {},
      creationTimestamp: md.creationTimestamp,
    },
    spec: wf.spec ?? {},
    status: rest,
  };
}

/** Applies the migrations not yet applied, each in its own transaction, under an advisory lock. */
async function migrate(pool: pg.Pool): Promise<void> {
  const client = await pool.connect();
  try {
    // A migration may rewrite a large table, and waits for another controller's: no timeout here.
    await client.query('set statement_timeout = 0');
    await client.query('select pg_advisory_lock($1)', [MIGRATION_LOCK]);
    await client.query(
      'create table if not exists plugflow_schema_migrations (version integer primary key, name text not null, applied_at timestamptz not null default now())',
    );
    const done = new Set(
      ((await client.query('select version from plugflow_schema_migrations')).rows as { version: number }[]).map((r) => r.version),
    );
    for (const m of MIGRATIONS) {
      if (done.has(m.version)) continue;
      await client.query('begin');
      try {
        await client.query(m.sql);
        await client.query('insert into plugflow_schema_migrations (version, name) values ($1, $2)', [m.version, m.name]);
        await client.query('commit');
      } catch (err) {
        await client.query('rollback').catch(() => {});
        throw new Error(`archive migration ${m.version} (${m.name}) failed: ${(err as Error).message}`);
      }
    }
  } finally {
    await client.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => {});
    await client.query('reset statement_timeout').catch(() => {});
    client.release();
  }
}
