/**
 * `make peer-examples`: the peer's published example directory, as a user would bring it —
 * only the API group (`argoproj.io` → `plugflow.io`) and the label prefix
 * (`workflows.argoproj.io/` → `workflows.plugflow.io/`) changed — linted offline, then (with
 * PEER_RUN=1) run on a `plugflow dev` stack of its own, each file's other objects (ConfigMaps,
 * templates) applied first and each workflow followed to its end.
 *
 * The examples come from PEER_EXAMPLES (a directory, e.g. a checkout's examples/) or else from the
 * peer's module on the Go module proxy (PEER_VERSION, default v4.0.5: the newest it serves here),
 * downloaded into the Go module cache — nothing of the peer is copied into this repository.
 *
 *   PEER_RUN=1            run them too (a local control plane, the pod runner, MinIO; ~15 min)
 *   PEER_ONLY=<regex>     only the files whose path matches
 *   PEER_TIMEOUT=<s>      longest wait for one workflow (default 120)
 *   PEER_PARALLEL=<n>     workflows in flight at once (default 6)
 *
 * Prints a line per file and a summary by outcome; the figures go to bench/RESULTS.md ("peer-examples").
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { machineDescription, updateResultsSection } from '../bench/run-all.js';
import { lintFiles } from '../src/cli/lint.js';
import { runPeerExamples, type ExampleOutcome } from './peer-examples/run.js';

const version = process.env.PEER_VERSION ?? 'v4.0.5';

function examplesDir(): string {
  if (process.env.PEER_EXAMPLES) return process.env.PEER_EXAMPLES;
  console.log(`[peer-examples] downloading github.com/argoproj/argo-workflows/v4@${version} from the Go module proxy …`);
  const out = execFileSync('go', ['mod', 'download', '-json', `github.com/argoproj/argo-workflows/v4@${version}`], {
    cwd: tmpdir(),
    env: { ...process.env, GOTOOLCHAIN: 'local', GOFLAGS: '-mod=mod' },
    encoding: 'utf8',
  });
  const dir = (JSON.parse(out) as { Dir?: string; Error?: string }).Dir;
  if (!dir) throw new Error(`go mod download gave no directory: ${out}`);
  return join(dir, 'examples');
}

function yamlFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir)) {
    const p = join(dir, e);
    if (statSync(p).isDirectory()) out.push(...yamlFiles(p));
    else if (/\.ya?ml$/.test(e)) out.push(p);
  }
  return out.sort();
}

/** The example with only the group and the label prefix changed, written to `work`. */
function adapted(file: string, from: string, work: string): string {
  const text = readFileSync(file, 'utf8')
    .replaceAll('argoproj.io/v1alpha1', 'plugflow.io/v1alpha1')
    .replaceAll('workflows.argoproj.io/', 'workflows.plugflow.io/');
  const target = join(work, relative(from, file).replaceAll('/', '__'));
  writeFileSync(target, text);
  return target;
}

const t0 = Date.now();
const source = examplesDir();
const only = process.env.PEER_ONLY ? new RegExp(process.env.PEER_ONLY) : undefined;
const work = mkdtempSync(join(tmpdir(), 'plugflow-peer-examples-'));
const files = yamlFiles(source)
  .filter((f) => !only || only.test(f))
  .map((f) => ({ name: relative(source, f), path: adapted(f, source, work) }));
console.log(`[peer-examples] ${files.length} files from ${source}`);

const lint = new Map<string, string[]>();
for (const f of files) {
  const r = await lintFiles([f.path], { offline: true });
  lint.set(
    f.name,
    r.problems.map((p) => p.replace(`${f.path}: `, '')),
  );
}
const lintFailed = [...lint.values()].filter((p) => p.length > 0).length;
console.log(`[peer-examples] lint: ${files.length - lintFailed} of ${files.length} files pass`);
for (const [name, problems] of lint) for (const p of problems) console.log(`  LINT ${name}: ${p}`);

let outcomes: ExampleOutcome[] = [];
if (process.env.PEER_RUN === '1') {
  // Every file goes in: the ConfigMaps and templates of one are used by the workflows of another.
  outcomes = await runPeerExamples(files, {
    timeoutMs: Number(process.env.PEER_TIMEOUT ?? 120) * 1000,
    parallel: Number(process.env.PEER_PARALLEL ?? 6),
    say: (l) => console.log(`[peer-examples] ${l}`),
  });
}

const byOutcome = new Map<string, number>();
for (const o of outcomes) byOutcome.set(o.phase, (byOutcome.get(o.phase) ?? 0) + 1);
const minutes = ((Date.now() - t0) / 60_000).toFixed(1);
const summary = [
  `Machine: ${machineDescription()}. Date: ${new Date().toISOString().slice(0, 10)}. Examples: ${process.env.PEER_EXAMPLES ? source : `the peer's module ${version}`} (${files.length} files), group and label prefix changed only; ${minutes} min.`,
  '',
  `- \`plugflow lint --offline\`: ${files.length - lintFailed} of ${files.length} files pass.`,
  ...(outcomes.length
    ? [
        `- Run on \`plugflow dev\` (${outcomes.length} files with workflows): ${[...byOutcome].map(([p, n]) => `${n} ${p}`).join(', ')}.`,
        '',
        '| example | outcome | message |',
        '|---|---|---|',
        ...outcomes.map((o) => `| ${o.name} | ${o.phase} | ${(o.message ?? '').replace(/\|/g, '\\|').slice(0, 200)} |`),
      ]
    : []),
].join('\n');
console.log(`\n${summary}`);
if (!only) updateResultsSection('peer-examples', "The peer's examples (`make peer-examples`)", summary);
process.exit(0);
