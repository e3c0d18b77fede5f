/**
 * The archive's schema, as versioned migrations applied in order (archive-store.ts `migrate`),
 * each once, recorded in `plugflow_schema_migrations`. A migration is never edited once
 * released: a change is a new one.
 *
 * One row per workflow with the columns people filter and sort on, its labels as rows (a label
 * filter is an index lookup), and its nodes as rows (a 100,000-node workflow is not one value).
 * Lists page by (finished_at, uid), so every page is an index range, however deep.
 *
 * Migration 2 holds the nodes of live workflows too large for their object (node-status-store.ts):
 * a row per node per version it changed in (`node` null: removed at that version). Migration 3
 * keeps those rows as json text: they are read back whole, never queried inside.
 */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'archived workflows, their labels and nodes',
    sql: `
create table archived_workflows (
  uid uuid primary key,
  namespace text not null,
  name text not null,
  phase text not null,
  started_at timestamptz,
  finished_at timestamptz not null,
  workflow_template text,
  cron_workflow text,
  creator text,
  message text,
  progress text,
  node_count integer not null,
  archived_at timestamptz not null default now(),
  metadata jsonb not null,
  spec jsonb not null,
  status jsonb not null
);
create index archived_workflows_by_namespace on archived_workflows (namespace, finished_at desc, uid desc);
create index archived_workflows_by_phase on archived_workflows (namespace, phase, finished_at desc, uid desc);
create index archived_workflows_by_finish on archived_workflows (finished_at desc, uid desc);
create index archived_workflows_by_name on archived_workflows (namespace, name);

create table archived_workflow_labels (
  uid uuid not null references archived_workflows (uid) on delete cascade,
  key text not null,
  value text not null,
  primary key (uid, key)
);
create index archived_workflow_labels_by_value on archived_workflow_labels (key, value, uid);

create table archived_workflow_nodes (
  uid uuid not null references archived_workflows (uid) on delete cascade,
  id text not null,
  node jsonb not null,
  primary key (uid, id)
);
`,
  },
  {
    version: 2,
    name: 'offloaded node status of live workflows, versioned',
    sql: `
create table offloaded_nodes (
  uid uuid not null,
  namespace text not null,
  id text not null,
  version bigint not null,
  node jsonb,
  written_at timestamptz not null default now(),
  primary key (uid, id, version)
);
create index offloaded_nodes_by_version on offloaded_nodes (uid, version);
`,
  },
  {
    version: 3,
    name: 'offloaded nodes stored as json text (written without building jsonb)',
    // Nodes are only ever read back whole, never queried inside: building jsonb for each of a
    // reconcile's changed nodes was half the cost of writing them (bench/huge-workflow-bench.ts).
    sql: `alter table offloaded_nodes alter column node type json using node::json;`,
  },
  {
    version: 4,
    name: "the uid of each archived workflow's namespace",
    // A namespace deleted and made again under the same name is another tenant's: its archived
    // workflows are removed when the old one goes (purgeNamespace), and this uid tells the rows
    // of the old namespace from those of the new when a deletion was missed (purgeGoneNamespaces).
    // Null on rows archived before it, which go with their namespace's name.
    sql: `alter table archived_workflows add column namespace_uid uuid;`,
  },
];
