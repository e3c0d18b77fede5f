/**
 * `plugflow cron create|list|get|suspend|resume|backfill|delete`: CronWorkflows in a namespace, through a
 * plugflow server (`--server`, REST /api/v1/cron-workflows…) or straight to Kubernetes with the
 * kubeconfig, both with the rights of whoever runs them (src/operations/cron-workflows.ts).
 */
import type { Command } from 'commander';
import { readFileSync } from 'node:fs';
import { stringify } from 'yaml';
import type { CronWorkflow } from '../api/index.js';
import type { ObjectList } from '../kube/client.js';
import { CronWorkflows, type BackfillAnswer } from '../operations/index.js';
import { OperationRefused } from '../operations/index.js';
import { readYamlDocuments } from '../yaml/kube-yaml.js';
import { cliClient, loadKubeConfig } from './kube-backend.js';
import { connectionFor } from './workflow-backend.js';
import { withCalls } from './with-calls.js';
import { consolePrinter, withConnectionFlags, type CommonFlags, type Printer } from './rest.js';

interface CronCalls {
  create(c: unknown): Promise<CronWorkflow>;
  list(selector?: string): Promise<ObjectList<CronWorkflow>>;
  get(name: string): Promise<CronWorkflow>;
  setSuspended(name: string, suspend: boolean): Promise<CronWorkflow>;
  backfill(name: string, req: { from: string; to: string; parallel?: number }): Promise<BackfillAnswer>;
  delete(name: string): Promise<void>;
  close(): Promise<void>;
}

async function callsFor(flags: CommonFlags & { context?: string }): Promise<CronCalls> {
  const conn = connectionFor(flags);
  const ns = flags.namespace ?? 'default';
  if (conn.kind === 'rest') {
    const c = conn.rest();
    const base = `/api/v1/cron-workflows/${encodeURIComponent(ns)}`;
    return {
      create: (cronWorkflow) => c.call('POST', base, { cronWorkflow }),
      list: (sel) => c.call('GET', `${base}${sel ? `?listOptions.labelSelector=${encodeURIComponent(sel)}` : ''}`),
      get: (name) => c.call('GET', `${base}/${encodeURIComponent(name)}`),
      setSuspended: (name, suspend) => c.call('PUT', `${base}/${encodeURIComponent(name)}/${suspend ? 'suspend' : 'resume'}`),
      backfill: (name, req) => c.call('POST', `${base}/${encodeURIComponent(name)}/backfill`, req),
      delete: async (name) => {
        await c.call('DELETE', `${base}/${encodeURIComponent(name)}`);
      },
      close: () => c.close(),
    };
  }
  const kube = await cliClient(loadKubeConfig(conn.kubeconfig, conn.context));
  const ops = new CronWorkflows(kube, ns);
  return {
    create: (x) => ops.create(x),
    list: (s) => ops.list(s),
    get: (n) => ops.get(n),
    setSuspended: (n, s) => ops.setSuspended(n, s),
    backfill: (n, r) => ops.backfill(n, r),
    delete: (n) => ops.delete(n),
    close: () => kube.close(),
  };
}

const where = (c: CronWorkflow) => `CronWorkflow ${c.metadata.namespace}/${c.metadata.name ?? ''}`;

export function runCronCreate(files: string[], flags: CommonFlags, p: Printer = consolePrinter): Promise<number> {
  return withCalls(callsFor(flags), p, async (c) => {
    for (const file of files) {
      const docs = readYamlDocuments(file === '-' ? readFileSync(0, 'utf8') : readFileSync(file, 'utf8'), file);
      if (docs.length === 0) throw new OperationRefused('invalid', `${file}: no CronWorkflow in the file`);
      for (const doc of docs) p.out(`${where(await c.create(doc))} created`);
    }
    return 0;
  });
}

export function runCronList(flags: CommonFlags & { selector?: string }, p: Printer = consolePrinter): Promise<number> {
  return withCalls(callsFor(flags), p, async (c) => {
    const list = await c.list(flags.selector);
    if (flags.output === 'name') for (const x of list.items) p.out(x.metadata.name ?? '');
    else if (flags.output === 'json') p.out(JSON.stringify(list.items, null, 2));
    else {
      p.out(`${'NAME'.padEnd(32)} ${'SCHEDULE'.padEnd(20)} ${'SUSPENDED'.padEnd(10)} ${'ACTIVE'.padEnd(7)} LAST SCHEDULED`);
      for (const x of list.items) {
        const schedule = x.spec?.schedule ?? (x.spec?.schedules ?? []).join(', ');
        p.out(
          `${(x.metadata.name ?? '').padEnd(32)} ${schedule.padEnd(20)} ${String(x.spec?.suspend === true).padEnd(10)} ${String(x.status?.active?.length ?? 0).padEnd(7)} ${x.status?.lastScheduledTime ?? '-'}`,
        );
      }
    }
    return 0;
  });
}

export function runCronGet(name: string, flags: CommonFlags, p: Printer = consolePrinter): Promise<number> {
  return withCalls(callsFor(flags), p, async (c) => {
    const x = await c.get(name);
    p.out(flags.output === 'json' ? JSON.stringify(x, null, 2) : stringify(x).trimEnd());
    return 0;
  });
}

export function runCronSuspend(names: string[], suspend: boolean, flags: CommonFlags, p: Printer = consolePrinter): Promise<number> {
  return withCalls(callsFor(flags), p, async (c) => {
    for (const name of names) p.out(`${where(await c.setSuspended(name, suspend))} ${suspend ? 'suspended' : 'resumed'}`);
    return 0;
  });
}

export interface BackfillFlags extends CommonFlags {
  from: string;
  to: string;
  parallel?: string;
  wait?: boolean;
  /** Between looks while waiting, ms. */
  pollMs?: number;
}

/**
 * `plugflow cron backfill NAME --from --to [--parallel N] [--wait]`: asks for the runs of the
 * range; with --wait, prints its progress until every run has started and ended.
 */
export function runCronBackfill(name: string, flags: BackfillFlags, p: Printer = consolePrinter): Promise<number> {
  return withCalls(callsFor(flags), p, async (c) => {
    let parallel: number | undefined;
    if (flags.parallel !== undefined) {
      parallel = Number(flags.parallel);
      if (!Number.isInteger(parallel)) throw new OperationRefused('invalid', `--parallel: ${flags.parallel} is not a whole number`);
    }
    const a = await c.backfill(name, { from: flags.from, to: flags.to, ...(parallel !== undefined ? { parallel } : {}) });
    if (flags.output === 'json') p.out(JSON.stringify(a, null, 2));
    else {
      p.out(`CronWorkflow ${flags.namespace ?? 'default'}/${name}: ${a.message}`);
      if (a.dropped.length) p.out(`  complete backfills dropped from the spec to make room: ${a.dropped.join(', ')}`);
      p.out(`  its runs: plugflow list -l workflows.plugflow.io/backfill=${a.backfill.name}`);
    }
    if (!flags.wait) return 0;
    let said = '';
    for (;;) {
      const cron = await c.get(name);
      const s = cron.status?.backfills?.find((b) => b.name === a.backfill.name);
      const line = s
        ? `${s.phase}: ${s.started}/${s.total} started, ${s.running?.length ?? 0} running${s.next ? `, next ${s.next}` : ''}${s.message ? ` (${s.message})` : ''}`
        : 'waiting for the controller';
      if (line !== said) p.out(`  ${line}`);
      said = line;
      if (s?.phase === 'Complete') return 0;
      if (s?.phase === 'Failed') return 1;
      await new Promise((r) => setTimeout(r, flags.pollMs ?? 2000));
    }
  });
}

export function runCronDelete(names: string[], flags: CommonFlags, p: Printer = consolePrinter): Promise<number> {
  return withCalls(callsFor(flags), p, async (c) => {
    for (const name of names) {
      await c.delete(name);
      p.out(`CronWorkflow ${flags.namespace ?? 'default'}/${name} deleted`);
    }
    return 0;
  });
}

const done = (code: number) => {
  process.exitCode = code;
};

export function registerCronCommands(program: Command): void {
  const g = program.command('cron').description('manage CronWorkflows (workflows started on a schedule)');
  withConnectionFlags(g.command('create <files...>').description('create CronWorkflows from YAML/JSON files ("-" for stdin)')).action(
    async (files: string[], flags: CommonFlags) => done(await runCronCreate(files, flags)),
  );
  withConnectionFlags(g.command('list').description('list CronWorkflows'))
    .option('-l, --selector <selector>', 'label selector')
    .option('-o, --output <format>', 'table (default), name or json')
    .action(async (flags: CommonFlags & { selector?: string }) => done(await runCronList(flags)));
  withConnectionFlags(g.command('get <name>').description('show a CronWorkflow with its status'))
    .option('-o, --output <format>', 'yaml (default) or json')
    .action(async (name: string, flags: CommonFlags) => done(await runCronGet(name, flags)));
  withConnectionFlags(g.command('suspend <names...>').description('start no run until resumed')).action(
    async (names: string[], flags: CommonFlags) => done(await runCronSuspend(names, true, flags)),
  );
  withConnectionFlags(
    g.command('resume <names...>').description('start runs again (a missed run may start, per startingDeadlineSeconds)'),
  ).action(async (names: string[], flags: CommonFlags) => done(await runCronSuspend(names, false, flags)));
  withConnectionFlags(
    g
      .command('backfill <name>')
      .description('run every scheduled time of a past range (once each: asking again for the same range starts nothing)'),
  )
    .requiredOption('--from <time>', 'first time of the range, RFC 3339 with its zone (2026-11-01T00:00:00Z)')
    .requiredOption('--to <time>', 'last time of the range, included, at most now')
    .option('--parallel <n>', 'runs of this backfill at once (default 1, at most 100)')
    .option('--wait', 'print its progress until every run has started and ended')
    .option('-o, --output <format>', 'text (default) or json')
    .action(async (name: string, flags: BackfillFlags) => done(await runCronBackfill(name, flags)));
  withConnectionFlags(g.command('delete <names...>').description('delete CronWorkflows (their runs go with them)')).action(
    async (names: string[], flags: CommonFlags) => done(await runCronDelete(names, flags)),
  );
}
