/**
 * `plugflow archive list|get|delete|resubmit|retry`: the workflow archive, through the server's REST API
 * (`--server` or PLUGFLOW_SERVER), so the caller's own rights decide what they see — the archive
 * has no other door.
 */
import type { Command } from 'commander';
import { stringify } from 'yaml';
import type { Workflow } from '../api/index.js';
import type { ArchivedSummary } from '../archive/archive-store.js';
import { consolePrinter, printTable, withConnectionFlags, type Printer } from './rest.js';
import type { RestClient } from './rest-client.js';
import { formatDuration, renderTree } from './tree.js';
import { connectionFor, type BackendFlags } from './workflow-backend.js';

interface ArchiveFlags extends BackendFlags {
  namespace?: string;
  allNamespaces?: boolean;
  phase?: string;
  selector?: string;
  limit?: number;
  continue?: string;
  count?: boolean;
  output?: string;
  parameter?: string[];
  restartSuccessful?: boolean;
  nodeFieldSelector?: string;
}

function client(flags: ArchiveFlags): RestClient {
  const c = connectionFor(flags);
  if (c.kind !== 'rest')
    throw new Error('plugflow archive reads the archive through the server: give --server (or PLUGFLOW_SERVER) and --token');
  return c.rest();
}

async function using<T>(flags: ArchiveFlags, run: (c: RestClient) => Promise<T>): Promise<T> {
  const c = client(flags);
  try {
    return await run(c);
  } finally {
    await c.close();
  }
}

export async function runArchiveList(flags: ArchiveFlags, p: Printer = consolePrinter): Promise<number> {
  const q = new URLSearchParams();
  if (!flags.allNamespaces) q.set('namespace', flags.namespace ?? 'default');
  if (flags.phase) q.set('phase', flags.phase);
  if (flags.selector) q.set('listOptions.labelSelector', flags.selector);
  if (flags.limit !== undefined) q.set('listOptions.limit', String(flags.limit));
  if (flags.continue) q.set('listOptions.continue', flags.continue);
  if (flags.count) q.set('count', 'true');
  const page = await using(flags, (c) =>
    c.call<{ items: ArchivedSummary[]; metadata: { continue?: string; count?: number } }>(
      'GET',
      `/api/v1/archived-workflows?${q.toString()}`,
    ),
  );
  if (flags.output === 'json') p.out(JSON.stringify(page, null, 2));
  else if (flags.output === 'name') for (const w of page.items) p.out(w.uid);
  else {
    const rows = [['NAMESPACE', 'NAME', 'STATUS', 'FINISHED', 'DURATION', 'UID']];
    const now = Date.now();
    for (const w of page.items)
      rows.push([
        w.namespace,
        w.name,
        w.phase,
        `${formatDuration(now - Date.parse(w.finishedAt))} ago`,
        w.startedAt ? formatDuration(Date.parse(w.finishedAt) - Date.parse(w.startedAt)) : '',
        w.uid,
      ]);
    if (page.items.length === 0) p.out('No archived workflows match.');
    else {
      printTable(p, rows);
    }
    if (page.metadata.count !== undefined) p.out(`(${page.metadata.count} archived workflows match)`);
    if (page.metadata.continue) p.out(`(more: --continue ${page.metadata.continue})`);
  }
  return 0;
}

export async function runArchiveGet(uid: string, flags: ArchiveFlags, p: Printer = consolePrinter): Promise<number> {
  const wf = await using(flags, (c) => c.call<Workflow>('GET', `/api/v1/archived-workflows/${encodeURIComponent(uid)}`));
  if (flags.output === 'json') p.out(JSON.stringify(wf, null, 2));
  else if (flags.output === 'yaml') p.out(stringify(wf).trimEnd());
  else p.out(renderTree(wf));
  return 0;
}

export async function runArchiveDelete(uids: string[], flags: ArchiveFlags, p: Printer = consolePrinter): Promise<number> {
  await using(flags, async (c) => {
    for (const uid of uids) {
      await c.call('DELETE', `/api/v1/archived-workflows/${encodeURIComponent(uid)}`);
      p.out(`archived workflow ${uid} deleted`);
    }
  });
  return 0;
}

export async function runArchiveResubmit(uid: string, flags: ArchiveFlags, p: Printer = consolePrinter): Promise<number> {
  const wf = await using(flags, (c) =>
    c.call<Workflow>('PUT', `/api/v1/archived-workflows/${encodeURIComponent(uid)}/resubmit`, { parameters: flags.parameter ?? [] }),
  );
  p.out(`Workflow ${wf.metadata.namespace}/${wf.metadata.name} submitted (resubmitted from archived workflow ${uid})`);
  return 0;
}

export async function runArchiveRetry(uid: string, flags: ArchiveFlags, p: Printer = consolePrinter): Promise<number> {
  const wf = await using(flags, (c) =>
    c.call<Workflow>('PUT', `/api/v1/archived-workflows/${encodeURIComponent(uid)}/retry`, {
      ...(flags.restartSuccessful ? { restartSuccessful: true } : {}),
      ...(flags.nodeFieldSelector ? { nodeFieldSelector: flags.nodeFieldSelector } : {}),
    }),
  );
  p.out(`Workflow ${wf.metadata.namespace}/${wf.metadata.name} retried (created again from archived workflow ${uid})`);
  return 0;
}

const collect = (v: string, prev: string[]) => [...prev, v];
const done = (code: number) => {
  process.exitCode = code;
};

export function registerArchiveCommands(program: Command): void {
  const archive = program.command('archive').description('finished workflows kept in the archive (through the server, with your rights)');
  withConnectionFlags(archive.command('list').description('list archived workflows, newest finished first'))
    .option('-A, --all-namespaces', 'every namespace you may list workflows in cluster-wide')
    .option('--phase <phases>', 'only these phases, e.g. Failed,Error')
    .option('-l, --selector <selector>', 'label selector, e.g. app=web,tier!=db')
    .option('--limit <n>', 'at most this many (with --continue for the next page)', (v) => Number.parseInt(v, 10))
    .option('--continue <token>', 'continue a limited list')
    .option('--count', 'also print how many archived workflows match in all')
    .option('-o, --output <format>', 'wide table (default), name (the uids) or json')
    .action(async (flags: ArchiveFlags) => done(await runArchiveList(flags)));
  withConnectionFlags(archive.command('get <uid>').description('show an archived workflow as a tree of its steps'))
    .option('-o, --output <format>', 'tree (default), json or yaml')
    .action(async (uid: string, flags: ArchiveFlags) => done(await runArchiveGet(uid, flags)));
  withConnectionFlags(archive.command('delete <uids...>').description('delete archived workflows')).action(
    async (uids: string[], flags: ArchiveFlags) => done(await runArchiveDelete(uids, flags)),
  );
  withConnectionFlags(archive.command('resubmit <uid>').description('submit an archived workflow again, as a new workflow'))
    .option('-p, --parameter <name=value>', 'override a workflow argument (repeatable)', collect, [])
    .action(async (uid: string, flags: ArchiveFlags) => done(await runArchiveResubmit(uid, flags)));
  withConnectionFlags(
    archive
      .command('retry <uid>')
      .description(
        'run an archived failed workflow again from where it failed, created again under its name (its live object must be gone)',
      ),
  )
    .option('--restart-successful', 'also run again the succeeded steps the node field selector picks')
    .option('--node-field-selector <selector>', 'which steps to run again, e.g. displayName=build (with --restart-successful)')
    .action(async (uid: string, flags: ArchiveFlags) => done(await runArchiveRetry(uid, flags)));
}
