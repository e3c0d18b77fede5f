/**
 * `plugflow template create|list|get|delete` (WorkflowTemplates, in a namespace) and
 * `plugflow cluster-template …` (ClusterWorkflowTemplates): through a plugflow server
 * (`--server`, REST /api/v1/workflow-templates…) or straight to Kubernetes with the kubeconfig,
 * both with the rights of whoever runs them (src/operations/templates.ts).
 */
import type { Command } from 'commander';
import { readFileSync } from 'node:fs';
import { stringify } from 'yaml';
import type { ObjectList } from '../kube/client.js';
import { OperationRefused } from '../operations/index.js';
import { Templates, type TemplateKind, type TemplateObject } from '../operations/index.js';
import { readYamlDocuments } from '../yaml/kube-yaml.js';
import { cliClient, loadKubeConfig } from './kube-backend.js';
import { connectionFor } from './workflow-backend.js';
import { withCalls } from './with-calls.js';
import { consolePrinter, withConnectionFlags, type CommonFlags, type Printer } from './rest.js';

/** The calls a template command needs, over REST or the kubeconfig. */
interface TemplateCalls {
  create(t: unknown): Promise<TemplateObject>;
  list(selector?: string): Promise<ObjectList<TemplateObject>>;
  get(name: string): Promise<TemplateObject>;
  delete(name: string): Promise<void>;
  close(): Promise<void>;
}

async function callsFor(kind: TemplateKind, flags: CommonFlags & { context?: string }): Promise<TemplateCalls> {
  const conn = connectionFor(flags);
  const ns = flags.namespace ?? 'default';
  if (conn.kind === 'rest') {
    const c = conn.rest();
    const base =
      kind === 'WorkflowTemplate' ? `/api/v1/workflow-templates/${encodeURIComponent(ns)}` : '/api/v1/cluster-workflow-templates';
    return {
      create: (template) => c.call('POST', base, { template }),
      list: (sel) => c.call('GET', `${base}${sel ? `?listOptions.labelSelector=${encodeURIComponent(sel)}` : ''}`),
      get: (name) => c.call('GET', `${base}/${encodeURIComponent(name)}`),
      delete: async (name) => {
        await c.call('DELETE', `${base}/${encodeURIComponent(name)}`);
      },
      close: () => c.close(),
    };
  }
  const kube = await cliClient(loadKubeConfig(conn.kubeconfig, conn.context));
  const t = new Templates(kube, kind, ns);
  return {
    create: (x) => t.create(x),
    list: (s) => t.list(s),
    get: (n) => t.get(n),
    delete: (n) => t.delete(n),
    close: () => kube.close(),
  };
}

const where = (kind: TemplateKind, t: TemplateObject) =>
  `${kind} ${t.metadata.namespace ? `${t.metadata.namespace}/` : ''}${t.metadata.name ?? ''}`;

export function runTemplateCreate(kind: TemplateKind, files: string[], flags: CommonFlags, p: Printer = consolePrinter): Promise<number> {
  return withCalls(callsFor(kind, flags), p, async (c) => {
    for (const file of files) {
      const docs = readYamlDocuments(file === '-' ? readFileSync(0, 'utf8') : readFileSync(file, 'utf8'), file);
      if (docs.length === 0) throw new OperationRefused('invalid', `${file}: no ${kind} in the file`);
      for (const doc of docs) p.out(`${where(kind, await c.create(doc))} created`);
    }
    return 0;
  });
}

export function runTemplateList(
  kind: TemplateKind,
  flags: CommonFlags & { selector?: string },
  p: Printer = consolePrinter,
): Promise<number> {
  return withCalls(callsFor(kind, flags), p, async (c) => {
    const list = await c.list(flags.selector);
    if (flags.output === 'name') for (const t of list.items) p.out(t.metadata.name ?? '');
    else if (flags.output === 'json') p.out(JSON.stringify(list.items, null, 2));
    else {
      p.out(`${'NAME'.padEnd(40)} ${'ENTRYPOINT'.padEnd(20)} TEMPLATES`);
      for (const t of list.items)
        p.out(
          `${(t.metadata.name ?? '').padEnd(40)} ${(t.spec?.entrypoint ?? '').padEnd(20)} ${(t.spec?.templates ?? []).map((x) => x.name).join(', ')}`,
        );
    }
    return 0;
  });
}

export function runTemplateGet(kind: TemplateKind, name: string, flags: CommonFlags, p: Printer = consolePrinter): Promise<number> {
  return withCalls(callsFor(kind, flags), p, async (c) => {
    const t = await c.get(name);
    p.out(flags.output === 'json' ? JSON.stringify(t, null, 2) : stringify(t).trimEnd());
    return 0;
  });
}

export function runTemplateDelete(kind: TemplateKind, names: string[], flags: CommonFlags, p: Printer = consolePrinter): Promise<number> {
  return withCalls(callsFor(kind, flags), p, async (c) => {
    for (const name of names) {
      await c.delete(name);
      p.out(`${kind} ${kind === 'WorkflowTemplate' ? `${flags.namespace ?? 'default'}/` : ''}${name} deleted`);
    }
    return 0;
  });
}

const done = (code: number) => {
  process.exitCode = code;
};

export function registerTemplateCommands(program: Command): void {
  const groups: [string, TemplateKind][] = [
    ['template', 'WorkflowTemplate'],
    ['cluster-template', 'ClusterWorkflowTemplate'],
  ];
  for (const [command, kind] of groups) {
    const g = program.command(command).description(`manage ${kind}s`);
    withConnectionFlags(g.command('create <files...>').description(`create ${kind}s from YAML/JSON files ("-" for stdin)`)).action(
      async (files: string[], flags: CommonFlags) => done(await runTemplateCreate(kind, files, flags)),
    );
    withConnectionFlags(g.command('list').description(`list ${kind}s`))
      .option('-l, --selector <selector>', 'label selector')
      .option('-o, --output <format>', 'table (default), name or json')
      .action(async (flags: CommonFlags & { selector?: string }) => done(await runTemplateList(kind, flags)));
    withConnectionFlags(g.command('get <name>').description(`show a ${kind}`))
      .option('-o, --output <format>', 'yaml (default) or json')
      .action(async (name: string, flags: CommonFlags) => done(await runTemplateGet(kind, name, flags)));
    withConnectionFlags(g.command('delete <names...>').description(`delete ${kind}s`)).action(async (names: string[], flags: CommonFlags) =>
      done(await runTemplateDelete(kind, names, flags)),
    );
  }
}
