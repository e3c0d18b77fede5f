/**
 * `plugflow lint FILE...`: checks workflows (and CronWorkflows: their schedules, then their
 * workflowSpec as a run) before they are submitted, with the check the server runs on create
 * (src/operations/lint.ts) — shape, fields plugflow does not implement, the engine's validation —
 * and says every problem with its file and field. Other kinds in the files are listed as skipped. (Cluster)WorkflowTemplates
 * a workflow refers to come from the same files first, then from the cluster of the kubeconfig
 * (read with your rights), unless `--offline`, where a reference to a template not in the files
 * is itself a problem to fix or to check online.
 */
import type { Command } from 'commander';
import { readFileSync } from 'node:fs';
import { API_VERSION, type CronWorkflow, type Workflow, type WorkflowSpec } from '../api/index.js';
import { cronScheduleProblems } from '../operations/index.js';
import type { KubeClient } from '../kube/client.js';
import { errorMessage } from '../log/error-message.js';
import { clusterTemplates, workflowProblems, withLocalTemplates } from '../operations/index.js';
import { workflowShapeProblems } from '../api/index.js';
import { booleanKeys } from '../yaml/bool-keys.js';
import { readYamlDocuments } from '../yaml/kube-yaml.js';
import { cliClient, loadKubeConfig } from './kube-backend.js';
import { consolePrinter, type Printer } from './rest.js';

interface LintFlags {
  namespace?: string;
  kubeconfig?: string;
  context?: string;
  offline?: boolean;
}

interface Doc {
  file: string;
  kind: string;
  name: string;
  obj: Record<string, unknown>;
}

const TEMPLATE_KINDS = new Set(['WorkflowTemplate', 'ClusterWorkflowTemplate']);

function readDocs(files: string[]): { docs: Doc[]; problems: string[]; skipped: string[]; warnings: string[] } {
  const docs: Doc[] = [];
  const problems: string[] = [];
  const skipped: string[] = [];
  const warnings: string[] = [];
  for (const file of files) {
    let parsed: unknown[];
    try {
      const text = file === '-' ? readFileSync(0, 'utf8') : readFileSync(file, 'utf8');
      parsed = readYamlDocuments(text, file);
      for (const w of booleanKeys(text, file)) warnings.push(`${file}: ${w.message}`);
    } catch (err) {
      problems.push(`${file}: ${errorMessage(err)}`);
      continue;
    }
    parsed.forEach((obj, i) => {
      if (typeof obj !== 'object' || obj === null || Array.isArray(obj)) {
        problems.push(`${file}: document ${i + 1} is not an object`);
        return;
      }
      const o = obj as Record<string, unknown>;
      const kind = typeof o.kind === 'string' ? o.kind : 'Workflow';
      const md = (typeof o.metadata === 'object' && o.metadata ? o.metadata : {}) as { name?: unknown; generateName?: unknown };
      const name = typeof md.name === 'string' ? md.name : `${typeof md.generateName === 'string' ? md.generateName : ''}*`;
      // Files often carry what a workflow needs beside it (a ConfigMap, an RBAC Role): noted, not faults.
      if (kind !== 'Workflow' && kind !== 'CronWorkflow' && !TEMPLATE_KINDS.has(kind)) skipped.push(`${file}: ${kind} ${name}`);
      else docs.push({ file, kind, name, obj: o });
    });
  }
  return { docs, problems, skipped, warnings };
}

/** Every problem of the files' documents, each prefixed with its file and object. */
export async function lintFiles(
  files: string[],
  flags: LintFlags,
): Promise<{ problems: string[]; checked: number; skipped: string[]; warnings: string[] }> {
  const { docs, problems, skipped, warnings } = readDocs(files);
  const local = docs
    .filter((d) => TEMPLATE_KINDS.has(d.kind))
    .map((d) => ({ kind: d.kind, name: d.name, spec: (d.obj.spec ?? {}) as WorkflowSpec }));
  let kube: KubeClient | undefined;
  try {
    if (!flags.offline) kube = await cliClient(loadKubeConfig(flags.kubeconfig, flags.context));
    for (const d of docs) {
      const subject = `${d.file}: ${d.kind} ${d.name}`;
      if (TEMPLATE_KINDS.has(d.kind)) {
        for (const p of workflowShapeProblems({ spec: d.obj.spec ?? {} })) problems.push(`${subject}: ${p.message}`);
        continue;
      }
      const ns = (d.obj.metadata as { namespace?: string } | undefined)?.namespace ?? flags.namespace ?? 'default';
      const fetch = withLocalTemplates(local, kube ? clusterTemplates(kube, ns) : undefined);
      if (d.kind === 'CronWorkflow') {
        // Its own fields, then its workflowSpec checked as the workflow each run will be.
        const cron = d.obj as unknown as CronWorkflow;
        for (const p of cronScheduleProblems(cron)) problems.push(`${subject}: ${p}`);
        const workflowSpec = cron.spec?.workflowSpec;
        if (typeof workflowSpec !== 'object' || workflowSpec === null) {
          problems.push(`${subject}: spec.workflowSpec is required`);
          continue;
        }
        const run = {
          apiVersion: API_VERSION,
          kind: 'Workflow',
          metadata: { name: d.name, namespace: ns },
          spec: workflowSpec,
        } as Workflow;
        for (const p of await workflowProblems(run, fetch)) problems.push(`${subject}: ${p.replace(/^spec\./, 'spec.workflowSpec.')}`);
        continue;
      }
      for (const p of await workflowProblems(d.obj as unknown as Workflow, fetch)) problems.push(`${subject}: ${p}`);
    }
  } finally {
    await kube?.close();
  }
  return { problems, checked: docs.length, skipped, warnings };
}

export async function runLint(files: string[], flags: LintFlags, p: Printer = consolePrinter): Promise<number> {
  const { problems, checked, skipped, warnings } = await lintFiles(files, flags);
  for (const line of skipped) p.out(`${line}: skipped (not a workflow kind)`);
  for (const line of warnings) p.err(`warning: ${line}`);
  for (const line of problems) p.err(line);
  p.out(problems.length ? `${problems.length} problem(s) in ${checked} document(s)` : `${checked} document(s): no problems`);
  return problems.length ? 1 : 0;
}

export function registerLintCommands(program: Command): void {
  program
    .command('lint <files...>')
    .description('check workflows (and the templates they use) without submitting them; exit code 1 if anything is wrong')
    .option('--offline', 'do not read templates from the cluster: only those in the files')
    .option('-n, --namespace <ns>', 'namespace of WorkflowTemplates for workflows that do not name one', 'default')
    .option('--kubeconfig <path>', 'kubeconfig for templates the files refer to (default: $KUBECONFIG or ~/.kube/config)')
    .option('--context <name>', 'kubeconfig context')
    .action(async (files: string[], flags: LintFlags) => {
      process.exitCode = await runLint(files, flags);
    });
}
