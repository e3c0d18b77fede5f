/**
 * Whether a node may be linked under two parents. A DAG links each task under every task it
 * depends on (execute-dag.ts `link`), so only a task with two or more dependencies gets two
 * parents; every other link is to a node's own part. Without such a task anywhere the workflow
 * can reach — its templates, inline ones, those of the WorkflowTemplates it refers to — the nodes
 * form a forest, and progress.ts sums them in one walk instead of counting every node's parents.
 */
import type { Template } from '../api/index.js';
import type { TemplateSource } from './contract.js';
import { compileTaskDepends } from './dag-depends.js';

export function mayLinkTwice(own: readonly Template[], sources: Readonly<Record<string, TemplateSource>>): boolean {
  if (own.some(linksTwice)) return true;
  for (const key in sources) if (sources[key]!.templates.some(linksTwice)) return true;
  return false;
}

function linksTwice(template: Template): boolean {
  const tasks = template.dag?.tasks ?? [];
  if (tasks.length > 0) {
    let depends;
    try {
      depends = compileTaskDepends(tasks, `spec.templates[${template.name}]`);
    } catch {
      return true; // not readable here: assume the worst (the run reports the error itself)
    }
    for (const d of depends.values()) if (d !== undefined && new Set(d.names).size >= 2) return true;
    if (tasks.some((t) => t.inline !== undefined && linksTwice(t.inline))) return true;
  }
  for (const group of template.steps ?? []) for (const step of group) if (step.inline !== undefined && linksTwice(step.inline)) return true;
  return false;
}
