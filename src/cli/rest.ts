/**
 * `plugflow submit FILE`, `list`, `get NAME`, `delete NAME…`. With `--server URL --token T`
 * (or PLUGFLOW_SERVER / PLUGFLOW_TOKEN) they use the server's REST API; without, the kubeconfig
 * (see workflow-backend.ts). The commands only talk to a WorkflowBackend, so both paths print
 * the same.
 */
import type { Command } from 'commander';
import { readFileSync } from 'node:fs';
import { stringify } from 'yaml';
import { FINAL_WORKFLOW_PHASES, FieldError, ValidationError, type Parameter, type Workflow } from '../api/index.js';
import { checkSpecFields } from '../engine/index.js';
import { booleanKeys } from '../yaml/bool-keys.js';
import { readYamlDocuments } from '../yaml/kube-yaml.js';
import { formatDuration, renderTree } from './tree.js';
import { backendFor, type BackendFlags, type WorkflowBackend } from './workflow-backend.js';

export interface Printer {
  out(line: string): void;
  err(line: string): void;
}
export const consolePrinter: Printer = { out: (l) => console.log(l), err: (l) => console.error(l) };

/** Rows as columns padded to their widest cell, two spaces apart (the first row is the header). */
export function printTable(p: Printer, rows: string[][]): void {
  const width = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
  for (const r of rows)
    p.out(
      r
        .map((cell, c) => cell.padEnd(width[c]))
        .join('  ')
        .trimEnd(),
    );
}

export interface CommonFlags extends BackendFlags {
  namespace?: string;
  output?: string;
}

/** Reads the Workflows of a YAML/JSON file (several documents allowed), as kubectl reads it. */
export function readWorkflowFile(path: string, warn?: (message: string) => void): Workflow[] {
  const text = path === '-' ? readFileSync(0, 'utf8') : readFileSync(path, 'utf8');
  const source = path === '-' ? '<stdin>' : path;
  const out: Workflow[] = [];
  // Keys kubectl reads as booleans (`n:` becomes "false"): read as kubectl does, but said.
  if (warn) for (const w of booleanKeys(text, source)) warn(`${source}: ${w.message}`);
  for (const obj of readYamlDocuments(text, source) as Workflow[]) {
    if (typeof obj !== 'object' || Array.isArray(obj))
      throw new Error(`${path}: a document is ${Array.isArray(obj) ? 'a list' : JSON.stringify(obj)}, not a Workflow object`);
    if ((obj as { kind?: string }).kind !== undefined && obj.kind !== 'Workflow')
      throw new Error(`${path}: expected kind Workflow, got ${String(obj.kind)}`);
    out.push(obj);
  }
  if (out.length === 0) throw new Error(`${path}: no workflow in the file`);
  return out;
}

/** Applies `-p name=value` to spec.arguments.parameters (replacing by name, else adding). */
export function applyParameters(wf: Workflow, params: string[]): Workflow {
  if (params.length === 0) return wf;
  const list: Parameter[] = [...(wf.spec?.arguments?.parameters ?? [])];
  for (const p of params) {
    const eq = p.indexOf('=');
    if (eq <= 0) throw new Error(`-p expects name=value, got "${p}"`);
    const name = p.slice(0, eq);
    const value = p.slice(eq + 1);
    const i = list.findIndex((x) => x.name === name);
    if (i >= 0) list[i] = { ...list[i], value, valueFrom: undefined };
    else list.push({ name, value });
  }
  return { ...wf, spec: { ...wf.spec, arguments: { ...wf.spec?.arguments, parameters: list } } };
}

function print(p: Printer, wf: Workflow, output: string | undefined): void {
  if (output === 'json') p.out(JSON.stringify(wf, null, 2));
  else if (output === 'yaml') p.out(stringify(wf).trimEnd());
  else if (output === 'name') p.out(wf.metadata.name ?? '');
  else p.out(renderTree(wf));
}

/** Polls until the workflow reaches a final phase; with `watch`, prints the tree on each change. */
export async function follow(
  b: WorkflowBackend,
  ns: string,
  name: string,
  watch: boolean,
  p: Printer,
  intervalMs = 1000,
): Promise<Workflow> {
  let last = '';
  for (;;) {
    const wf = await b.get(ns, name);
    if (watch) {
      const view = renderTree({ ...wf, status: wf.status });
      const key = JSON.stringify(wf.status ?? {});
      if (key !== last) p.out(`\n${view}`);
      last = key;
    }
    if (wf.status?.phase && FINAL_WORKFLOW_PHASES.includes(wf.status.phase)) return wf;
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/**
 * Fields plugflow does not implement are refused before anything is sent: through the kubeconfig
 * the API server would store them (or prune unknown ones) and only the controller would fail
 * the workflow later.
 */
export function refuseUnsupportedFields(wf: Workflow, ns: string): void {
  const issues: FieldError[] = [];
  if (wf.spec && typeof wf.spec === 'object') checkSpecFields(wf.spec, (field, detail) => issues.push(new FieldError(field, detail)));
  if (issues.length > 0) throw new ValidationError(`Workflow ${ns}/${wf.metadata?.name ?? `${wf.metadata?.generateName ?? ''}*`}`, issues);
}

export async function runSubmit(
  file: string,
  flags: CommonFlags & { parameter: string[]; serverDryRun?: boolean; wait?: boolean; watch?: boolean; generateName?: string },
  p = consolePrinter,
): Promise<number> {
  const b = backendFor(flags);
  let failed = false;
  try {
    for (const given of readWorkflowFile(file, (m) => p.err(`warning: ${m}`))) {
      let wf = applyParameters(given, flags.parameter);
      if (flags.generateName) wf = { ...wf, metadata: { ...wf.metadata, name: undefined, generateName: flags.generateName } };
      const ns = flags.namespace ?? wf.metadata?.namespace ?? 'default';
      refuseUnsupportedFields(wf, ns);
      const created = await b.create(ns, wf, flags.serverDryRun ?? false);
      const name = created.metadata.name ?? '';
      if (flags.output) print(p, created, flags.output);
      else p.out(`Workflow ${ns}/${name} ${flags.serverDryRun ? 'validated (server dry run, nothing stored)' : 'submitted'}`);
      if ((flags.wait || flags.watch) && !flags.serverDryRun) {
        const done = await follow(b, ns, name, flags.watch ?? false, p);
        const st = done.status!;
        const took = st.startedAt && st.finishedAt ? ` in ${formatDuration(Date.parse(st.finishedAt) - Date.parse(st.startedAt))}` : '';
        p.out(`Workflow ${ns}/${name} ${st.phase}${took}${st.message ? `: ${st.message}` : ''}`);
        if (st.phase !== 'Succeeded') failed = true;
      }
    }
  } finally {
    await b.close();
  }
  return failed ? 1 : 0;
}

export async function runList(
  flags: CommonFlags & { selector?: string; fieldSelector?: string; limit?: number; continue?: string },
  p = consolePrinter,
): Promise<number> {
  const b = backendFor(flags);
  try {
    const ns = flags.namespace ?? 'default';
    const list = await b.list(ns, {
      labelSelector: flags.selector,
      fieldSelector: flags.fieldSelector,
      limit: flags.limit,
      continue: flags.continue,
    });
    const items = list.items ?? [];
    if (flags.output === 'json') p.out(JSON.stringify(list, null, 2));
    else if (flags.output === 'name') for (const wf of items) p.out(wf.metadata.name ?? '');
    else {
      const rows = [['NAME', 'STATUS', 'AGE', 'DURATION', 'MESSAGE']];
      const now = Date.now();
      for (const wf of items) {
        const st = wf.status ?? {};
        const created = wf.metadata.creationTimestamp ? Date.parse(String(wf.metadata.creationTimestamp)) : now;
        const dur = st.startedAt ? formatDuration((st.finishedAt ? Date.parse(st.finishedAt) : now) - Date.parse(st.startedAt)) : '';
        rows.push([wf.metadata.name ?? '', st.phase || 'Pending', formatDuration(now - created), dur, st.message ?? '']);
      }
      if (items.length === 0) p.out(`No workflows in namespace ${ns}.`);
      else {
        printTable(p, rows);
      }
      if (list.metadata?.continue) p.out(`(more: --continue ${list.metadata.continue})`);
    }
  } finally {
    await b.close();
  }
  return 0;
}

export async function runGet(name: string, flags: CommonFlags, p = consolePrinter): Promise<number> {
  const b = backendFor(flags);
  try {
    print(p, await b.get(flags.namespace ?? 'default', name), flags.output);
  } finally {
    await b.close();
  }
  return 0;
}

export async function runDelete(names: string[], flags: CommonFlags, p = consolePrinter): Promise<number> {
  const b = backendFor(flags);
  const ns = flags.namespace ?? 'default';
  try {
    for (const name of names) {
      await b.delete(ns, name);
      p.out(`Workflow ${ns}/${name} deleted`);
    }
  } finally {
    await b.close();
  }
  return 0;
}

/** --server, --token, -k, -n, --kubeconfig: shared by the workflow commands. */
export function withConnectionFlags(cmd: Command): Command {
  return cmd
    .option('--server <url>', 'plugflow server address (REST API); default $PLUGFLOW_SERVER; without it, the kubeconfig is used')
    .option('--token <token>', 'bearer token for the server (client auth mode); default $PLUGFLOW_TOKEN')
    .option('-k, --insecure-skip-tls-verify', "accept the server's certificate unchecked (a generated self-signed one)")
    .option('--kubeconfig <path>', 'kubeconfig (when no --server is given)')
    .option('-n, --namespace <ns>', 'namespace (default: the workflow\'s, else "default")');
}

const collect = (v: string, prev: string[]) => [...prev, v];
const done = (code: number) => {
  process.exitCode = code;
};

export function registerWorkflowCommands(program: Command): void {
  withConnectionFlags(program.command('submit <file>').description('submit a workflow from a YAML/JSON file ("-" for stdin)'))
    .option('-p, --parameter <name=value>', 'set a workflow argument (repeatable)', collect, [])
    .option('--generate-name <prefix>', 'ignore metadata.name and let the API server pick a name with this prefix')
    .option('--server-dry-run', 'validate on the server without storing anything')
    .option('--wait', 'wait until the workflow finishes; exit code 1 unless it Succeeded')
    .option('--watch', 'print the workflow tree as it changes until it finishes')
    .option('-o, --output <format>', 'print the created workflow: name, json, yaml or tree')
    .action(async (file: string, flags) => done(await runSubmit(file, flags)));
  withConnectionFlags(program.command('list').description('list workflows of a namespace'))
    .option('-l, --selector <selector>', 'label selector, e.g. app=x,tier!=db')
    .option('--field-selector <selector>', 'field selector, e.g. metadata.name=x')
    .option('--limit <n>', 'at most this many (with --continue for the next page)', (v) => Number.parseInt(v, 10))
    .option('--continue <token>', 'continue a limited list')
    .option('-o, --output <format>', 'wide table (default), name or json')
    .action(async (flags) => done(await runList(flags)));
  withConnectionFlags(program.command('get <name>').description('show a workflow as a tree of its steps'))
    .option('-o, --output <format>', 'tree (default), json or yaml')
    .action(async (name: string, flags) => done(await runGet(name, flags)));
  withConnectionFlags(program.command('delete <names...>').description('delete workflows')).action(async (names: string[], flags) =>
    done(await runDelete(names, flags)),
  );
}
