/**
 * The soak's report: a plain-text summary for the terminal (with the memory-over-time table)
 * and a Markdown section for bench/RESULTS.md.
 */
import type { SoakReport } from './run-soak.js';

const s = (ms: number) => `${(ms / 1000).toFixed(1)}s`;
const mib = (kib: number | undefined) => (kib === undefined ? '—' : (kib / 1024).toFixed(0));

export function workflowTotals(r: SoakReport): { total: number; asDesigned: number } {
  return Object.values(r.result.workflowsByDesign).reduce(
    (a, d) => ({ total: a.total + d.total, asDesigned: a.asDesigned + d.asDesigned }),
    { total: 0, asDesigned: 0 },
  );
}

const growth = (g: number) => (Number.isNaN(g) ? 'n/a: no incarnation lived for 8 samples' : `×${g.toFixed(2)}`);

export function rssTable(r: SoakReport): string[] {
  const lines = ['  time     controller MiB (#)   server MiB (#)   driver+runner MiB'];
  // At most ~60 rows: every n-th sample, and always the last.
  const every = Math.max(1, Math.ceil(r.rss.length / 60));
  for (const [i, x] of r.rss.entries()) {
    if (i % every !== 0 && i !== r.rss.length - 1) continue;
    lines.push(
      `  ${s(x.at).padStart(7)}  ${mib(x.controller).padStart(8)} (${x.controllerIncarnation})  ${mib(x.server).padStart(11)} (${x.serverIncarnation})  ${mib(x.driver).padStart(12)}`,
    );
  }
  return lines;
}

export function textReport(r: SoakReport): string {
  const t = workflowTotals(r);
  const e = r.result.events;
  const lines = [
    `soak ${r.chaos ? 'with chaos ' : ''}— seed ${r.seed}, workload ${s(r.durationMs)}, settled ${r.settled ? 'in' : 'NOT within'} ${s(r.settleMs)}, wall ${s(r.wallMs)}`,
    `workflows: ${t.total} finished as designed: ${t.asDesigned}`,
    ...Object.entries(r.result.workflowsByDesign).map(([d, x]) => `  ${d.padEnd(15)} ${x.asDesigned}/${x.total}`),
    `REST submissions: ${r.submissions.total} (${r.submissions.accepted} accepted, ${r.submissions.retried} needed a retry)`,
    `events: sent ${e.sent}, accepted ${e.accepted}, rejected ${e.rejected}, unanswered ${e.unanswered}, delivered (1 workflow each) ${e.delivered}, left open by their answer (0 or 1 workflow) ${e.open}, accepted but lost ${e.lost}`,
    `  answers by kind: ${e.breakdown}`,
    `server counters (summed over incarnations): accepted ${r.counters.accepted}, dispatched ${r.counters.dispatched}, submitted ${r.counters.submitted}, queue full ${r.counters.queueFull}, invalid ${r.counters.invalid}, shutting down ${r.counters.shuttingDown}, binding errors ${r.counters.bindingErrors}`,
    `chaos: ${r.chaosDone.length ? '' : 'none'}`,
    ...r.chaosDone.map(
      (c) =>
        `  ${s(c.at).padStart(7)} ${c.kind.padEnd(18)} ${c.skipped ? 'SKIPPED ' : ''}${c.detail}${c.downMs !== undefined ? ` (down ${c.downMs} ms)` : ''}`,
    ),
    `restarts survived: controller ${r.restarts.controller}, server ${r.restarts.server}, API server ${r.restarts.apiServer}, agent pods ${r.restarts.agentPods}, plugin sidecars ${r.restarts.sidecars}; the controller also exited ${r.restarts.controllerLostLease} time(s) on losing its lease during an API server outage (by design) and was restarted by supervision`,
    'memory (RSS) over time:',
    ...rssTable(r),
    ...r.result.memory.map(
      (m) =>
        `  ${m.component}: peak ${mib(m.peakKiB)} MiB; longest-lived incarnation ${mib(m.firstKiB)} → ${mib(m.lastKiB)} MiB (${growth(m.growth)}) ${m.bounded ? 'bounded' : 'GROWING'}`,
    ),
    ...(r.notes.length ? ['notes:', ...r.notes.map((n) => `  ${n}`)] : []),
    ...(r.result.findings.length ? ['findings (no invariant broken):', ...r.result.findings.map((f) => `  - ${f}`)] : []),
    r.result.violations.length ? `INVARIANTS VIOLATED (${r.result.violations.length}):` : 'all invariants hold',
    ...r.result.violations.map((v) => `  - ${v}`),
    `component logs: ${r.logDir}`,
  ];
  return lines.join('\n');
}

export function markdownReport(r: SoakReport, machine: string): string {
  const t = workflowTotals(r);
  const e = r.result.events;
  const peak = (c: string) => mib(r.result.memory.find((m) => m.component === c)?.peakKiB);
  const rows = [
    ['seed', String(r.seed)],
    ['workload / settle / wall', `${s(r.durationMs)} / ${s(r.settleMs)} / ${s(r.wallMs)}`],
    ['workflows completed (as designed / total)', `${t.asDesigned} / ${t.total}`],
    ...Object.entries(r.result.workflowsByDesign).map(([d, x]) => [`— ${d}`, `${x.asDesigned} / ${x.total}`]),
    ['events sent / accepted / rejected / unanswered', `${e.sent} / ${e.accepted} / ${e.rejected} / ${e.unanswered}`],
    ['events dispatched (server counters) / delivered as one workflow', `${r.counters.dispatched} / ${e.delivered}`],
    ['matching events whose answer left them open (no answer, 202, a bus 503): 0 or 1 workflow each', String(e.open)],
    ['accepted events (200) without their workflow', String(e.lost)],
    [
      'restarts survived (controller / server / API server / agent pod / sidecar)',
      `${r.restarts.controller} / ${r.restarts.server} / ${r.restarts.apiServer} / ${r.restarts.agentPods} / ${r.restarts.sidecars}`,
    ],
    ['controller exits on a lost lease (by design; restarted like a Deployment would)', String(r.restarts.controllerLostLease)],
    ['peak RSS controller / server (MiB)', `${peak('controller')} / ${peak('server')}`],
    [
      'memory growth controller / server (longest incarnation)',
      r.result.memory.map((m) => `${growth(m.growth)}${m.bounded ? '' : ' GROWING'}`).join(' / '),
    ],
    ['invariants', r.result.violations.length ? `**${r.result.violations.length} violated**` : 'all hold'],
  ];
  return [
    `Machine: ${machine}. Date: ${new Date().toISOString().slice(0, 10)}.`,
    '',
    '| figure | value |',
    '|---|---|',
    ...rows.map(([k, v]) => `| ${k} | ${v} |`),
    '',
    ...(r.chaosDone.length
      ? ['Chaos actions:', '', ...r.chaosDone.map((c) => `- ${s(c.at)} \`${c.kind}\`: ${c.skipped ? 'skipped — ' : ''}${c.detail}`), '']
      : []),
    ...(r.result.findings.length ? ['Findings (no invariant broken):', '', ...r.result.findings.map((f) => `- ${f}`), ''] : []),
    ...(r.result.violations.length
      ? [
          'Violations:',
          '',
          ...r.result.violations.slice(0, 40).map((v) => `- ${v}`),
          ...(r.result.violations.length > 40 ? [`- … and ${r.result.violations.length - 40} more`] : []),
          '',
        ]
      : []),
  ].join('\n');
}
