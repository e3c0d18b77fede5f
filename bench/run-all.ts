/**
 * `make bench`: every benchmark in bench/ (each `*-bench.ts`), figures into bench/RESULTS.md (a
 * table: figure, value, goal, met or not, machine, date) and the scale curves into
 * bench/results.svg.
 *
 * A benchmark takes part through its exported `run…()` function (Figure[]); one without such an
 * export is run as its own process and its output is kept verbatim. Order: pure benchmarks
 * first, then those that time control planes of their own (control-plane-bench, engine-bench),
 * then one shared control plane for the rest: server-bench on it (through KUBECONFIG), then the
 * whole stack on that same plane for scale-bench.
 *
 * Also exports the RESULTS.md helpers that `make soak` and `make fuzz` use for their sections.
 */
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem, type } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ControlPlane } from '../src/devenv/control-plane.js';
import { installBase, startDevStack } from '../src/devenv/dev-stack.js';
import { renderCharts } from './chart.js';
import { printFigures, type Figure } from './figures.js';
import type { ScaleResult } from './scale-bench.js';

const BENCH_DIR = dirname(fileURLToPath(import.meta.url));
export const RESULTS_PATH = join(BENCH_DIR, 'RESULTS.md');

/** One line about the machine: CPU model and count, memory, OS, Node. */
export function machineDescription(): string {
  const c = cpus();
  const model = (c[0]?.model ?? 'unknown CPU').replace(/\s+/g, ' ').trim();
  return `${c.length} × ${model}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, ${type()}, Node ${process.version}`;
}

const HEADER = [
  '# plugflow — measured figures',
  '',
  'Written by the runs themselves: `make bench` (section "Benchmarks"), `make soak` (sections',
  '"Soak…") and `make fuzz` (section "Fuzz"). Each section says the machine and date of its run.',
  '',
].join('\n');

/**
 * Replaces (or appends) one section of RESULTS.md, delimited by HTML comments, so each of
 * `make bench`, `make soak` and `make fuzz` rewrites only its own figures.
 */
/**
 * For a benchmark run on its own (`npx tsx bench/X-bench.ts`): prints its figures and writes them
 * as the table of section `id` of RESULTS.md, with the machine, the date and how long it took.
 */
export function writeFiguresSection(id: string, title: string, figures: Figure[], startedMs: number): void {
  printFigures(id, figures);
  const rows = figures.map(
    (f) => `| ${f.name}${f.note ? `<br><sub>${f.note}</sub>` : ''} | ${f.value} ${f.unit} | ${f.goal} | ${f.met ? 'yes' : 'no'} |`,
  );
  const took = ((Date.now() - startedMs) / 1000).toFixed(0);
  updateResultsSection(
    id,
    title,
    [
      `Machine: ${machineDescription()}. Date: ${new Date().toISOString().slice(0, 10)}. Took ${took} s.`,
      '',
      '| figure | value | goal | met |',
      '|---|---|---|---|',
      ...rows,
    ].join('\n'),
  );
}

export function updateResultsSection(id: string, title: string, body: string, path = RESULTS_PATH): void {
  const text = existsSync(path) ? readFileSync(path, 'utf8') : HEADER;
  const start = `<!-- section:${id} -->`;
  const end = `<!-- /section:${id} -->`;
  const block = `${start}\n## ${title}\n\n${body.trim()}\n${end}`;
  const i = text.indexOf(start);
  const j = text.indexOf(end);
  const next = i >= 0 && j > i ? text.slice(0, i) + block + text.slice(j + end.length) : `${text.trimEnd()}\n\n${block}\n`;
  writeFileSync(path, next);
}

// ---------------------------------------------------------------- running the benchmarks

interface BenchRun {
  file: string;
  title: string;
  figures: Figure[];
  seconds: number;
  /** Why it produced no figures (it threw), if it did not. */
  error?: string;
  /** Output of a benchmark without a run…() export, run as its own process. */
  printed?: string;
}

/** Where each known benchmark runs: before the shared control plane, on it, or on the whole stack. */
const ORDER: Record<string, { title: string; stage: 'pure' | 'own-plane' | 'shared-plane' | 'stack' }> = {
  'expr-bench.ts': { title: 'expression language', stage: 'pure' },
  'regex-bench.ts': { title: 'regular expressions (ours vs re2js)', stage: 'pure' },
  'agent-bench.ts': { title: 'agent', stage: 'pure' },
  'fanout-bench.ts': { title: 'large fan-out in the engine', stage: 'pure' },
  'control-plane-bench.ts': { title: 'control plane', stage: 'own-plane' },
  'engine-bench.ts': { title: 'controller and engine', stage: 'own-plane' },
  'artifact-bench.ts': { title: 'artifacts', stage: 'own-plane' },
  'memoize-bench.ts': { title: 'memoize', stage: 'own-plane' },
  'lock-bench.ts': { title: 'locks', stage: 'own-plane' },
  'cron-bench.ts': { title: 'cron', stage: 'own-plane' },
  'template-kinds-bench.ts': { title: 'template kinds', stage: 'own-plane' },
  'image-entrypoint-bench.ts': { title: 'image entrypoints', stage: 'pure' },
  'archive-bench.ts': { title: 'workflow archive (PostgreSQL)', stage: 'own-plane' },
  'huge-workflow-bench.ts': { title: 'huge workflows (100,000 nodes, offloaded)', stage: 'own-plane' },
  'replicas-bench.ts': { title: 'controller replicas (--sharding)', stage: 'own-plane' },
  'crd-schema-bench.ts': { title: 'Workflow CRD schema per write', stage: 'own-plane' },
  'ui-bench.ts': { title: 'web UI', stage: 'own-plane' },
  'server-bench.ts': { title: 'server: event endpoint', stage: 'shared-plane' },
  'scale-bench.ts': { title: 'scale curves (whole system)', stage: 'stack' },
};

/**
 * Benches with a make target of their own: peer-bench.ts builds and runs the peer's controller
 * (`make bench-peer`); node-bench.ts needs root, the node's binaries and the images (`make
 * bench-node`); peer-node-bench.ts needs both (`make bench-peer-node`).
 */
const RUN_ON_THEIR_OWN = new Set(['peer-bench.ts', 'node-bench.ts', 'peer-node-bench.ts']);

function benchFiles(): string[] {
  return readdirSync(BENCH_DIR)
    .filter((f) => f.endsWith('-bench.ts') && !RUN_ON_THEIR_OWN.has(f))
    .sort();
}

/** The benchmark's exported `run…` function, found without running the module's top level. */
function runExportName(file: string): string | undefined {
  const m = /export\s+async\s+function\s+(run[A-Za-z0-9]*)\s*\(/.exec(readFileSync(join(BENCH_DIR, file), 'utf8'));
  return m?.[1];
}

async function runOne(file: string, call: (fn: (...a: unknown[]) => Promise<unknown>) => Promise<Figure[]>): Promise<BenchRun> {
  const title = ORDER[file]?.title ?? file.replace(/-bench\.ts$/, '');
  const t0 = performance.now();
  console.log(`\n### ${file}`);
  const fnName = runExportName(file);
  try {
    if (!fnName) {
      const printed = execFileSync(process.execPath, ['--import', 'tsx', join(BENCH_DIR, file)], {
        cwd: join(BENCH_DIR, '..'),
        encoding: 'utf8',
        timeout: 20 * 60_000,
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      console.log(printed);
      return { file, title, figures: [], seconds: (performance.now() - t0) / 1000, printed };
    }
    const mod = (await import(pathToFileURL(join(BENCH_DIR, file)).href)) as Record<string, (...a: unknown[]) => Promise<unknown>>;
    const figures = await call(mod[fnName]!);
    printFigures(title, figures);
    return { file, title, figures, seconds: (performance.now() - t0) / 1000 };
  } catch (err) {
    console.log(`${file} FAILED: ${(err as Error)?.stack ?? err}`);
    return { file, title, figures: [], seconds: (performance.now() - t0) / 1000, error: (err as Error)?.message ?? String(err) };
  }
}

const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');

function markdown(runs: BenchRun[], machine: string, date: string, totalSeconds: number, svgName: string): string {
  const short = `${cpus().length} cores, ${(totalmem() / 2 ** 30).toFixed(0)} GiB`;
  const lines = [
    `Machine: ${machine}. Date: ${date}. \`make bench\` took ${(totalSeconds / 60).toFixed(1)} min.`,
    '',
    '| benchmark | figure | value | goal | met | machine | date |',
    '|---|---|---|---|---|---|---|',
  ];
  for (const r of runs) {
    if (r.error) lines.push(`| ${r.title} | **failed**: ${cell(r.error.slice(0, 300))} | — | — | no | ${short} | ${date} |`);
    for (const f of r.figures) {
      lines.push(
        `| ${r.title} | ${cell(f.name)}${f.note ? `<br><sub>${cell(f.note)}</sub>` : ''} | ${f.value} ${cell(f.unit)} | ${cell(f.goal)} | ${f.met ? 'yes' : '**no**'} | ${short} | ${date} |`,
      );
    }
  }
  lines.push('', `![scale curves](${svgName})`, '');
  const printed = runs.filter((r) => r.printed);
  for (const r of printed)
    lines.push(`Output of ${r.file} (no \`run…()\` export, so its figures are not in the table):`, '', '```', r.printed!.trim(), '```', '');
  lines.push('Time per benchmark: ' + runs.map((r) => `${r.file} ${r.seconds.toFixed(0)} s`).join(', ') + '.');
  return lines.join('\n');
}

function curves(scale: ScaleResult | undefined, caption: string): string {
  const s = scale?.scale ?? [];
  const l = scale?.load ?? [];
  return renderCharts(
    [
      {
        title: 'Workflows as their number grows',
        xLabel: 'one-step workflows (log scale; 1,000 container: ≤ 100 in flight)',
        leftLabel: 'workflows / min',
        rightLabel: 'API writes per workflow',
        leftLog: true,
        series: (['pod', 'podless'] as const).flatMap((kind) => {
          const pts = s.filter((p) => p.kind === kind);
          const dashed = kind === 'podless';
          const name = kind === 'pod' ? 'container step' : 'pod-less step';
          return [
            {
              label: `workflows/min, ${name}`,
              color: '#1f77b4',
              dashed,
              axis: 'left' as const,
              points: pts.map((p) => ({ x: p.workflows, y: p.perMinute })),
            },
            {
              label: `controller writes/wf, ${name}`,
              color: '#ff7f0e',
              dashed,
              axis: 'right' as const,
              points: pts.map((p) => ({ x: p.workflows, y: p.controllerWritesPerWorkflow })),
            },
          ];
        }),
      },
      {
        title: 'Event endpoint as offered load grows',
        xLabel: 'offered events/s (log scale)',
        leftLabel: 'events/s',
        rightLabel: 'p99 reply latency (ms)',
        rightLog: true,
        series: [
          { label: 'accepted events/s', color: '#1f77b4', axis: 'left', points: l.map((p) => ({ x: p.offered, y: p.achieved })) },
          {
            label: 'offered events/s',
            color: '#999999',
            dashed: true,
            axis: 'left',
            points: l.map((p) => ({ x: p.offered, y: p.offered })),
          },
          { label: 'p99 latency', color: '#d62728', axis: 'right', points: l.map((p) => ({ x: p.offered, y: p.p99 })) },
        ],
      },
    ],
    caption,
  );
}

/** Waits (bounded) until no namespace is Terminating. */
async function waitForNamespacesGone(admin: KubeConfig, timeoutMs: number): Promise<void> {
  const core = admin.makeApiClient(CoreV1Api);
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    const terminating = (await core.listNamespace()).items.filter((n) => n.status?.phase === 'Terminating').map((n) => n.metadata?.name);
    if (terminating.length === 0) return;
    await new Promise((r) => setTimeout(r, 1000));
  }
  console.log('warning: namespaces still terminating after the shared-plane benchmarks; the scale curves may include their clean-up');
}

async function main(): Promise<void> {
  const t0 = performance.now();
  const date = new Date().toISOString().slice(0, 10);
  const machine = machineDescription();
  console.log(`make bench — ${machine}`);
  const files = benchFiles();
  const stageOf = (f: string) => ORDER[f]?.stage ?? 'shared-plane';
  const runs: BenchRun[] = [];

  // Pure benchmarks and those that measure control planes of their own come first, while the
  // machine is otherwise quiet.
  for (const f of files.filter((f) => stageOf(f) === 'pure' || stageOf(f) === 'own-plane'))
    runs.push(await runOne(f, (fn) => fn() as Promise<Figure[]>));

  // One control plane for the rest: the server benchmark on it through KUBECONFIG, then the
  // whole stack (runner, controller, server) on the same plane for the scale curves.
  const dir = join(BENCH_DIR, '..', '.plugflow', `bench-${Date.now()}`);
  const plane = new ControlPlane({ dir: join(dir, 'control-plane'), log: (l) => console.log(l) });
  await plane.start();
  let scale: ScaleResult | undefined;
  try {
    const admin = new KubeConfig();
    admin.loadFromFile(plane.kubeconfigPath);
    await installBase(admin, []);
    process.env.KUBECONFIG = plane.kubeconfigPath;
    for (const f of files.filter((f) => stageOf(f) === 'shared-plane')) runs.push(await runOne(f, (fn) => fn() as Promise<Figure[]>));
    // The namespaces those benchmarks deleted must be gone before a controller starts: their
    // workflows would otherwise be reconciled during, and counted in, the scale curves.
    await waitForNamespacesGone(admin, 300_000);
    const stack = await startDevStack({
      kubeconfig: plane.kubeconfigPath,
      runner: true,
      serverPort: 0,
      secure: false,
      dir,
      progress: (l) => console.log(l),
    });
    try {
      for (const f of files.filter((f) => stageOf(f) === 'stack')) {
        runs.push(
          await runOne(f, async (fn) => {
            scale = (await fn(stack)) as ScaleResult;
            return scale.figures;
          }),
        );
      }
    } finally {
      await stack.stop();
    }
  } finally {
    await plane.stop();
  }

  const seconds = (performance.now() - t0) / 1000;
  const svgName = 'results.svg';
  writeFileSync(join(BENCH_DIR, svgName), curves(scale, `${machine} — ${date}`));
  updateResultsSection('bench', 'Benchmarks (`make bench`)', markdown(runs, machine, date, seconds, svgName));
  console.log(`\nfigures written to bench/RESULTS.md and bench/${svgName} (${(seconds / 60).toFixed(1)} min)`);
  const failed = runs.filter((r) => r.error);
  if (failed.length) {
    console.log(`benchmarks that failed: ${failed.map((r) => r.file).join(', ')}`);
    process.exitCode = 1;
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await main();
  process.exit(process.exitCode ?? 0);
}
