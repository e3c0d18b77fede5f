/**
 * The node status of live workflows too large for their object, on the archive's PostgreSQL
 * (the peer's "offloaded node status", kept by version so readers never mix two reconciles).
 *
 * A workflow's nodes are stored as changes: each status write that offloads gives the workflow a
 * new version V (`status.offloadNodeStatusVersion`) and writes one row per node that changed in
 * it, at V. The node set at V is, per node id, its row with the highest version ≤ V. So:
 * - a write costs what changed, not the whole graph (a 100,000-node loop finishing 1,000 items
 *   writes 1,000 rows);
 * - a reader holding the object at V reads exactly V's nodes, however far the writer has moved on;
 * - rows at versions the object never reached (its status write conflicted) are dropped by the
 *   next write, which reuses the version: a reader can never hold such a version.
 *
 * Old rows are kept while a reader may still hold an older object: a row superseded more than
 * `keepSupersededMs` ago (default 5 minutes, the peer's figure) is removed by `compact`.
 */
import type pg from 'pg';
import type { NodeStatus, NodeStatusReader } from '../api/index.js';

/** Rows per INSERT: a write of 100,000 changed nodes is 40 statements. */
const ROW_BATCH = 2500;
/** INSERTs of one write in flight at once (of the pool's connections). */
const SAVE_LANES = 3;

export class NodeStatusStore implements NodeStatusReader {
  constructor(
    private readonly pool: pg.Pool,
    /** Brings the schema up to date (the archive's migrations). */
    private readonly ready: () => Promise<void>,
    private readonly keepSupersededMs = 5 * 60_000,
  ) {}

  /**
   * Writes version `version` of a workflow's nodes: `changed` (added or changed since the version
   * before) and `removed` ids. Rows at `version` or later from a write that never reached the
   * object are dropped first.
   */
  async save(
    where: { uid: string; namespace: string },
    version: number,
    changed: Readonly<Record<string, NodeStatus>>,
    removed: readonly string[] = [],
  ): Promise<void> {
    const { uid, namespace } = where;
    await this.ready();
    // Not one transaction: nothing reads `version` before the object names it, which it does
    // only once every statement here is in. A write cut short leaves rows at `version` that the
    // next write (which reuses the version) drops first, here.
    await this.pool.query('delete from offloaded_nodes where uid = $1 and version >= $2', [uid, version]);
    const ids = Object.keys(changed);
    const slices: string[][] = [];
    for (let i = 0; i < ids.length; i += ROW_BATCH) slices.push(ids.slice(i, i + ROW_BATCH));
    // Slices side by side on their own connections: the database parses and indexes them on
    // more than one core while the controller waits.
    let next = 0;
    const lane = async (): Promise<void> => {
      while (next < slices.length) {
        // Each slice of changed nodes as one JSON object (id → node), taken apart by the database:
        // one text parameter, not an array of them each escaped character by character.
        const slice = Object.create(null) as Record<string, NodeStatus>;
        for (const id of slices[next++]!) slice[id] = changed[id]!;
        await this.pool.query(
          `insert into offloaded_nodes (uid, namespace, id, version, node)
           select $1, $2, t.key, $3, t.value from json_each($4::json) as t`,
          [uid, namespace, version, JSON.stringify(slice)],
        );
      }
    };
    await Promise.all(Array.from({ length: Math.min(SAVE_LANES, slices.length) }, lane));
    if (removed.length > 0)
      await this.pool.query(
        `insert into offloaded_nodes (uid, namespace, id, version, node) select $1, $2, id, $3, null from unnest($4::text[]) as id`,
        [uid, namespace, version, removed],
      );
  }

  async load(uid: string, version: number): Promise<Record<string, NodeStatus>> {
    await this.ready();
    const r = await this.pool.query(
      `select id, node from (
         select distinct on (id) id, node from offloaded_nodes where uid = $1 and version <= $2 order by id, version desc
       ) latest where node is not null`,
      [uid, version],
    );
    if (r.rowCount === 0) throw new Error(`the offloaded nodes of workflow ${uid} at version ${version} are not in the database`);
    const nodes = Object.create(null) as Record<string, NodeStatus>;
    for (const row of r.rows as { id: string; node: NodeStatus }[]) nodes[row.id] = row.node;
    return nodes;
  }

  /**
   * The node set at `version`, `pageSize` ids at a time in id order, each node as its JSON text:
   * a reader holds one page, not the whole set (the server streams a huge workflow this way).
   */
  async *nodePages(uid: string, version: number, pageSize = 2000): AsyncIterable<[id: string, json: string][]> {
    await this.ready();
    let after = '';
    let any = false;
    for (;;) {
      const r = await this.pool.query(
        `select distinct on (id) id, node::text as json from offloaded_nodes
          where uid = $1 and version <= $2 and id > $3 order by id, version desc limit $4`,
        [uid, version, after, pageSize],
      );
      const rows = r.rows as { id: string; json: string | null }[];
      if (rows.length === 0 && !any)
        throw new Error(`the offloaded nodes of workflow ${uid} at version ${version} are not in the database`);
      any = true;
      const page = rows.filter((row) => row.json !== null).map((row): [string, string] => [row.id, row.json!]);
      if (page.length > 0) yield page;
      if (rows.length < pageSize) return;
      after = rows.at(-1)!.id;
    }
  }

  /** Removes the rows no reader can need any more: superseded at a version ≤ `upTo` more than keepSupersededMs ago. */
  async compact(uid: string, upTo: number): Promise<number> {
    await this.ready();
    const r = await this.pool.query(
      `delete from offloaded_nodes o using offloaded_nodes n
        where o.uid = $1 and n.uid = $1 and n.id = o.id and n.version > o.version and n.version <= $2
          and n.written_at < now() - ($3::bigint * interval '1 millisecond')`,
      [uid, upTo, this.keepSupersededMs],
    );
    return r.rowCount ?? 0;
  }

  /** Removes every version of a workflow's nodes (the workflow is gone, archived first when the archive is on). */
  async forget(uid: string): Promise<number> {
    await this.ready();
    return (await this.pool.query('delete from offloaded_nodes where uid = $1', [uid])).rowCount ?? 0;
  }

  /**
   * Removes the nodes of workflows that are gone: every uid with rows in `namespaces` (all when
   * undefined) that is not in `live` and was last written more than `quietMs` ago (a workflow
   * created a moment ago may not be in the caller's cache yet). Returns the uids removed.
   */
  async sweep(live: ReadonlySet<string>, namespaces: readonly string[] | undefined, quietMs = 10 * 60_000): Promise<string[]> {
    await this.ready();
    const r = await this.pool.query(
      `select uid from offloaded_nodes where ($1::text[] is null or namespace = any($1)) group by uid
        having max(written_at) < now() - ($2::bigint * interval '1 millisecond')`,
      [namespaces ?? null, quietMs],
    );
    const gone = (r.rows as { uid: string }[]).map((row) => row.uid).filter((uid) => !live.has(uid));
    if (gone.length > 0) await this.pool.query('delete from offloaded_nodes where uid = any($1::uuid[])', [gone]);
    return gone;
  }

  /** The rows stored for a workflow (tests and the bench: what compaction leaves). */
  async rowCount(uid: string): Promise<number> {
    await this.ready();
    const r = await this.pool.query('select count(*)::bigint as n from offloaded_nodes where uid = $1', [uid]);
    return Number((r.rows[0] as { n: string }).n);
  }
}
