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
import { LABEL_CRON_WORKFLOW } from '../api/index.js';
import { encodeCursor, pageQuery, whereClause, type ArchiveFilter, type PageRequest } from './archive-query.js';
import { MIGRATIONS } from './migrations.js';

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
}

/** Nodes per INSERT statement: a 100,000-node workflow is 100 statements in its one transaction. */
const NODE_BATCH = 1000;
/** Serializes migrations between controllers starting together. */
const MIGRATION_LOCK = 0x706c7567; // "plug"

const SUMMARY_COLUMNS =
  'w.uid, w.namespace, w.name, w.phase, w.started_at, w.finished_at, w.workflow_template, w.cron_workflow, w.message, w.progress, w.node_count, w.archived_at, w.metadata';

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
    const pool = new pg.Pool({ connectionString: url, max: opts.connections ?? 8, connectionTimeoutMillis: 10_000 });
    // An idle client losing its server (a restart) is an error event, not a crash.
    pool.on('error', () => {});
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

  /** Writes a finished workflow once; `already` when it was archived before. */
  async archive(wf: Workflow): Promise<'archived' | 'already'> {
    const md = wf.metadata ?? {};
    const uid = md.uid;
    if (!uid || !md.namespace || !md.name) throw new Error('only a stored workflow (with uid, namespace and name) can be archived');
    const status = inflateStatus(wf.status ?? {}, `workflow ${md.namespace}/${md.name}`);
    const finishedAt = status.finishedAt;
    if (!finishedAt || !status.phase)
      throw new Error(`workflow ${md.namespace}/${md.name} has not finished: only finished workflows are archived`);
    const { nodes = {}, ...rest } = status;
    const labels = md.labels ?? {};
    const metadata = {
      name: md.name,
      namespace: md.namespace,
      uid,
      labels,
      annotations: md.annotations ?? {},
      creationTimestamp: md.creationTimestamp,
    };
    await this.ready();
    const client = await this.pool.connect();
    try {
      await client.query('begin');
      const inserted = await client.query(
        `insert into archived_workflows (uid, namespace, name, phase, started_at, finished_at, workflow_template, cron_workflow, creator,
           message, progress, node_count, metadata, spec, status)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
         on conflict (uid) do nothing`,
        [
          uid,
          md.namespace,
          md.name,
          status.phase,
          status.startedAt ?? null,
          finishedAt,
          wf.spec?.workflowTemplateRef?.name ?? null,
          labels[LABEL_CRON_WORKFLOW] ?? null,
          labels['workflows.plugflow.io/creator'] ?? null,
          status.message ?? null,
          status.progress ?? null,
          Object.keys(nodes).length,
          metadata,
          wf.spec ?? {},
          rest,
        ],
      );
      if (inserted.rowCount === 0) {
        await client.query('rollback');
        return 'already';
      }
      const keys = Object.keys(labels);
      if (keys.length > 0)
        await client.query(
          'insert into archived_workflow_labels (uid, key, value) select $1, k, v from unnest($2::text[], $3::text[]) as t(k, v)',
          [uid, keys, keys.map((k) => labels[k])],
        );
      const ids = Object.keys(nodes);
      for (let i = 0; i < ids.length; i += NODE_BATCH) {
        const batch = ids.slice(i, i + NODE_BATCH);
        await client.query(
          'insert into archived_workflow_nodes (uid, id, node) select $1, id, node from unnest($2::text[], $3::jsonb[]) as t(id, node)',
          [uid, batch, batch.map((id) => JSON.stringify(nodes[id]))],
        );
      }
      await client.query('commit');
      return 'archived';
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

  /** The exact number of archived workflows the filter selects. */
  async count(filter: ArchiveFilter): Promise<number> {
    const { sql, params } = whereClause(filter);
    await this.ready();
    const r = await this.pool.query(`select count(*)::bigint as n from archived_workflows w where ${sql}`, params);
    return Number((r.rows[0] as { n: string }).n);
  }

  /** The archived workflow as it was when it finished, nodes included; undefined when not archived. */
  async get(uid: string): Promise<Workflow | undefined> {
    if (!/^[0-9a-f-]{36}$/.test(uid)) return undefined;
    await this.ready();
    const r = await this.pool.query('select metadata, spec, status from archived_workflows where uid = $1', [uid]);
    const row = r.rows[0] as { metadata: Workflow['metadata']; spec: Workflow['spec']; status: Workflow['status'] } | undefined;
    if (!row) return undefined;
    const nodes: Record<string, NodeStatus> = Object.create(null) as Record<string, NodeStatus>;
    for (const n of (await this.pool.query('select id, node from archived_workflow_nodes where uid = $1', [uid])).rows as {
      id: string;
      node: NodeStatus;
    }[])
      nodes[n.id] = n.node;
    return {
      apiVersion: 'plugflow.io/v1alpha1',
      kind: 'Workflow',
      metadata: row.metadata,
      spec: row.spec,
      status: { ...row.status, ...(Object.keys(nodes).length > 0 ? { nodes } : {}) },
    } as Workflow;
  }

  /** The namespace of an archived workflow (the server checks the caller's rights on it first). */
  async namespaceOf(uid: string): Promise<string | undefined> {
    if (!/^[0-9a-f-]{36}$/.test(uid)) return undefined;
    await this.ready();
    const r = await this.pool.query('select namespace from archived_workflows where uid = $1', [uid]);
    return (r.rows[0] as { namespace: string } | undefined)?.namespace;
  }

  async delete(uid: string): Promise<boolean> {
    if (!/^[0-9a-f-]{36}$/.test(uid)) return false;
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

/** Applies the migrations not yet applied, each in its own transaction, under an advisory lock. */
async function migrate(pool: pg.Pool): Promise<void> {
  const client = await pool.connect();
  try {
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
    client.release();
  }
}
