/**
 * `plugflow cp WORKFLOW DIR`: copies a workflow's output artifacts to a local directory, as
 * `DIR/<step>/<artifact>` (a file or a directory, unpacked as the next step would get it), through
 * a plugflow server (`--server`: GET /artifact-files/…) or straight with the kubeconfig. Either way
 * it reads with the rights of whoever runs it: the workflow and the Secrets of its repository.
 */
import type { Command } from 'commander';
import { createWriteStream, mkdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { errorMessage } from '../log/error-message.js';
import { nodeArtifacts } from '../operations/index.js';
import { collectedBy } from '../engine/index.js';
import { consolePrinter, withConnectionFlags, type CommonFlags } from './rest.js';
import { backendFor } from './workflow-backend.js';

type Printer = typeof consolePrinter;

/** A name safe as one path segment (a step's display name may hold `(`, `:`, `/`). */
function segment(name: string): string {
  const s = name.replace(/[^A-Za-z0-9._-]+/g, '_').replace(/^\.+/, '_');
  return s || '_';
}

export async function runCopy(
  name: string,
  dir: string,
  flags: CommonFlags & { node?: string; artifact?: string },
  p: Printer = consolePrinter,
): Promise<number> {
  const b = backendFor(flags);
  const ns = flags.namespace ?? 'default';
  try {
    const wf = await b.get(ns, name);
    const found = nodeArtifacts(wf, flags.node, flags.artifact);
    if (found.length === 0) {
      const which = [flags.node && `node "${flags.node}"`, flags.artifact && `artifact "${flags.artifact}"`].filter(Boolean).join(', ');
      p.err(`Workflow ${ns}/${name} has no output artifacts${which ? ` matching ${which}` : ''}`);
      return 1;
    }
    const { placeArtifact } = await import('../artifacts/unpack.js');
    const root = resolve(dir);
    let failed = 0;
    for (const { node, artifact } of found) {
      const gone = collectedBy(wf, artifact);
      if (gone) {
        p.out(`${node.displayName ?? node.name}/${artifact.name}: skipped, deleted by artifactGC (${gone})`);
        continue;
      }
      const nodeDir = join(root, segment(node.displayName ?? node.name));
      mkdirSync(nodeDir, { recursive: true });
      const dest = join(nodeDir, segment(artifact.name));
      const download = `${dest}.download`;
      const t0 = Date.now();
      try {
        const obj = await b.openArtifact(ns, name, node.id, artifact.name);
        try {
          await pipeline(obj.body, createWriteStream(download, { mode: 0o600 }));
        } finally {
          obj.close();
        }
        try {
          await placeArtifact(download, dest, `artifact "${artifact.name}" of ${node.displayName ?? node.name}`);
        } finally {
          rmSync(download, { recursive: true, force: true });
        }
        p.out(`${node.displayName ?? node.name}/${artifact.name} → ${dest} (${Date.now() - t0} ms)`);
      } catch (err) {
        failed++;
        p.err(`${node.displayName ?? node.name}/${artifact.name}: ${errorMessage(err)}`);
      }
    }
    return failed ? 1 : 0;
  } finally {
    await b.close();
  }
}

export function registerCopyCommands(program: Command): void {
  withConnectionFlags(
    program
      .command('cp <workflow> <dir>')
      .description(
        "copy a workflow's output artifacts into DIR/<step>/<artifact>, unpacked (with your rights: the workflow and its repository's Secrets)",
      ),
  )
    .option('--node <name>', 'only the artifacts of this step (node id, name or display name)')
    .option('--artifact <name>', 'only the artifact with this name')
    .action(async (workflow: string, dir: string, flags: CommonFlags & { node?: string; artifact?: string }) => {
      process.exitCode = await runCopy(workflow, dir, flags);
    });
}
