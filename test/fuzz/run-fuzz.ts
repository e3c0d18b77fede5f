/**
 * One fuzz run: the system up (controller and server as child processes, the pod runner for the
 * canary namespace only), canaries in place, then the server, agent and cluster targets with
 * `per` inputs each (seeded), then the canaries checked again: every accepted canary still
 * there and finished as designed, no process died.
 */
import { readFileSync } from 'node:fs';
import type { Workflow } from '../../src/api/index.js';
import { CONFIGMAPS, WORKFLOW_TEMPLATES, WORKFLOWS } from '../../src/kube/resource.js';
import { sleep } from '../soak/component.js';
import { buildWorkflow } from '../soak/designs.js';
import { closeHttp, submitWorkflow } from '../soak/http.js';
import { soakPluginConfigMaps } from '../soak/plugin-configmaps.js';
import { Prng } from '../soak/prng.js';
import { startSystem } from '../soak/system.js';
import { fuzzAgent } from './agent-fuzz.js';
import { BINDINGS, canaryEvent, fuzzCluster, type ClusterFuzzTarget } from './cluster-fuzz.js';
import { fuzzPodPolicy } from './pod-policy-fuzz.js';
import { fuzzPrototypeKeysInProcess, fuzzPrototypeKeysInSystem, fuzzRenderedValues } from './proto-fuzz.js';
import { fuzzExpressionCost } from './expr-cost-fuzz.js';
import { fuzzEnvelope } from './envelope-fuzz.js';
import { fuzzHttp2Bodies } from './http2-fuzz.js';
import { fuzzServer } from './server-fuzz.js';
import { fuzzServerAbuse } from './server-abuse-fuzz.js';
import { Tally, type TargetTally } from './tally.js';
import { fuzzArtifactLocations, fuzzCronSchedules, fuzzMetricLabels } from './tenant-cost-fuzz.js';

export interface FuzzOptions {
  seed: number;
  /** Inputs per target (the agent target runs this many tasks). */
  per: number;
  dir: string;
  say?: (line: string) => void;
}

export interface FuzzReport {
  seed: number;
  per: number;
  seconds: number;
  targets: TargetTally[];
  failures: number;
  logDir: string;
}

const NS = 'fuzz';
const CANARY_NS = 'fuzz-canary';

export async function runFuzz(o: FuzzOptions): Promise<FuzzReport> {
  const say = o.say ?? (() => {});
  const t0 = Date.now();
  const rng = new Prng(o.seed);
  const tally = new Tally();
  const system = await startSystem({
    dir: o.dir,
    namespaces: [NS, CANARY_NS],
    runnerNamespace: CANARY_NS,
    say,
    prepare: async (client) => {
      await client.create(WORKFLOW_TEMPLATES, NS, {
        apiVersion: 'plugflow.io/v1alpha1',
        kind: 'WorkflowTemplate',
        metadata: { name: 'fz-canary' },
        spec: {
          entrypoint: 'main',
          arguments: { parameters: [{ name: 'id', value: 'none' }] },
          templates: [{ name: 'main', container: { image: 'busybox', command: ['echo', '{{workflow.parameters.id}}'] } }],
        },
      });
      await client.create(BINDINGS, NS, {
        apiVersion: 'plugflow.io/v1alpha1',
        kind: 'WorkflowEventBinding',
        metadata: { name: 'aaa-canary' },
        spec: {
          event: { selector: 'payload.canary == true' },
          submit: {
            workflowTemplateRef: { name: 'fz-canary' },
            metadata: { labels: { 'fuzz.plugflow.io/canary': 'payload.id' } },
            arguments: { parameters: [{ name: 'id', valueFrom: { event: 'payload.id' } }] },
          },
        },
      });
      await client.create(CONFIGMAPS, NS, soakPluginConfigMaps(NS, 17_300)[0]);
    },
  });
  try {
    const target: ClusterFuzzTarget = {
      client: system.client,
      namespace: NS,
      serverUrl: system.serverUrl,
      token: system.adminToken,
      controllerLog: () =>
        Array.from({ length: system.controller.incarnation }, (_, i) => safeRead(system.controller.logPath(i + 1))).join('\n'),
      controllerMetricsUrl: system.controllerMetricsUrl,
      controllerAlive: () => system.controller.pid !== undefined,
    };
    // Canaries accepted before any hostile input: they must come through whole.
    const canaryName = `canary-${o.seed}`;
    const submitted = await submitWorkflow(system.serverUrl, system.adminToken, CANARY_NS, buildWorkflow('dag', canaryName));
    if (submitted.status !== 200)
      throw new Error(`the canary workflow was refused before the fuzz: ${submitted.status} ${submitted.text || submitted.error}`);
    await canaryEvent(target, tally, 'before the fuzz');

    say(`server: ${o.per} inputs per endpoint group`);
    const port = Number(new URL(system.serverUrl).port);
    await fuzzServer(
      rng.fork('server'),
      { port, token: system.adminToken, namespace: NS, alive: () => system.server.pid !== undefined },
      tally,
      o.per,
      say,
    );
    await canaryEvent(target, tally, 'after the server fuzz');

    say(`server abuse: stalled/trickled/oversized/unauthenticated requests and token floods, ${Math.max(1, Math.ceil(o.per / 25))} rounds`);
    await fuzzServerAbuse(
      rng.fork('server-abuse'),
      { port, token: system.adminToken, namespace: NS, metricsUrl: system.serverMetricsUrl, alive: () => system.server.pid !== undefined },
      tally,
      o.per,
      say,
    );
    await canaryEvent(target, tally, 'after the server abuse');

    say(`HTTP/2 bodies: ${o.per} hostile streams against the server's front over TLS, in process`);
    await fuzzHttp2Bodies(rng.fork('http2'), tally, o.per, say);

    say(`event envelope: ${o.per * 10} forged, moved and mutated bus messages, in process`);
    fuzzEnvelope(rng.fork('envelope'), tally, o.per);

    say(`agent: ${o.per} tasks against a hostile plugin`);
    await fuzzAgent(rng.fork('agent'), tally, o.per, say);

    say(`expression cost: ${o.per} hostile expressions in a child process under a watchdog`);
    await fuzzExpressionCost(rng.fork('expr-cost'), tally, o.per, say);

    say(`cron schedules: ${o.per} hostile CronWorkflows decided in process, a few created in the API server`);
    await fuzzCronSchedules(rng.fork('cron-cost'), target, tally, o.per, say);

    say(`metric labels: ${o.per * 20} hostile emissions in process, a few fan-outs with hostile labels through the controller`);
    await fuzzMetricLabels(rng.fork('metric-labels'), target, tally, o.per, say);

    say(`artifact locations: ${o.per} hostile location records in process, a few passed on as outputs through the controller`);
    await fuzzArtifactLocations(rng.fork('artifact-locations'), target, tally, o.per, say);

    say(`cluster: ${o.per} mutated workflows, and templates, bindings and plugin ConfigMaps`);
    await fuzzCluster(rng.fork('cluster'), target, tally, o.per, say);

    say(`pod-policy escapes: ${o.per} hostile workflows and plugin sidecars`);
    await fuzzPodPolicy(rng.fork('pod-policy'), target, tally, o.per, say);

    say(`prototype keys (${o.per * 10} in process, ${o.per} through the system) and ${o.per} metacharacter values`);
    fuzzPrototypeKeysInProcess(rng.fork('proto-pure'), tally, o.per * 10);
    await fuzzPrototypeKeysInSystem(rng.fork('proto'), target, tally, o.per);
    await fuzzRenderedValues(rng.fork('meta'), target, tally, o.per);

    // The canary workflow, accepted before everything, must have finished as designed.
    const canaries = tally.of('canaries (nothing accepted is lost)');
    canaries.tried++;
    let phase: string | undefined;
    for (let i = 0; i < 120 && !['Succeeded', 'Failed', 'Error'].includes(phase ?? ''); i++) {
      phase = (await system.client.get<Workflow>(WORKFLOWS, CANARY_NS, canaryName).catch(() => undefined))?.status?.phase;
      if (!['Succeeded', 'Failed', 'Error'].includes(phase ?? '')) await sleep(1000);
    }
    if (phase === 'Succeeded') canaries.accepted++;
    else
      tally.fail(
        canaries.target,
        `canary workflow ${CANARY_NS}/${canaryName} accepted before the fuzz ended ${phase ?? 'without a phase'}`,
      );
    await canaryEvent(target, tally, 'at the end');

    const liveness = tally.of('processes');
    for (const c of [system.controller, system.server]) {
      liveness.tried++;
      for (const e of c.unexpectedExits())
        tally.fail(liveness.target, `${c.spec.name} exited on its own (${e.code ?? e.signal}); see ${c.logPath(e.incarnation)}`);
      if (!c.pid) tally.fail(liveness.target, `${c.spec.name} is not running at the end`);
    }
    return {
      seed: o.seed,
      per: o.per,
      seconds: (Date.now() - t0) / 1000,
      targets: tally.all(),
      failures: tally.failures(),
      logDir: `${o.dir}/logs`,
    };
  } finally {
    await closeHttp();
    await system.stop();
  }
}

function safeRead(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

export function fuzzText(r: FuzzReport): string {
  const lines = [
    `fuzz — seed ${r.seed}, ${r.per} inputs per target, ${r.seconds.toFixed(0)} s`,
    '  target                                                        tried  accepted  rejected  failures',
  ];
  for (const t of r.targets)
    lines.push(
      `  ${t.target.padEnd(60)} ${String(t.tried).padStart(6)} ${String(t.accepted).padStart(9)} ${String(t.rejected).padStart(9)} ${String(t.failures.length).padStart(9)}`,
    );
  for (const t of r.targets) for (const f of grouped(t.failures)) lines.push(`  FAIL ${t.target}: ${f}`);
  for (const t of r.targets) for (const w of t.warnings) lines.push(`  note ${t.target}: ${w}`);
  lines.push(
    r.failures ? `${r.failures} FAILURES` : 'no crash, no hang, every rejection named its problem, every canary came through',
    `component logs: ${r.logDir}`,
  );
  return lines.join('\n');
}

/** The same line repeated is listed once, with its count. */
function grouped(lines: string[]): string[] {
  const counts = new Map<string, number>();
  for (const l of lines) counts.set(l, (counts.get(l) ?? 0) + 1);
  return [...counts].map(([l, n]) => (n > 1 ? `${l} (×${n})` : l));
}

/** Safe in a Markdown list: no table pipes, no raw HTML, no control characters. */
const md = (text: string) =>
  text
    .replace(/\|/g, '\\|')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/[\u0000-\u001f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

export function fuzzMarkdown(r: FuzzReport, machine: string): string {
  return [
    `Machine: ${machine}. Date: ${new Date().toISOString().slice(0, 10)}. Seed ${r.seed}, ${r.per} inputs per target, ${r.seconds.toFixed(0)} s.`,
    '',
    '| target | inputs tried | accepted | rejected (problem named) | failures | notes |',
    '|---|---|---|---|---|---|',
    ...r.targets.map((t) => `| ${t.target} | ${t.tried} | ${t.accepted} | ${t.rejected} | ${t.failures.length} | ${t.warnings.length} |`),
    '',
    `Crashes: ${r.targets.find((t) => t.target === 'processes')?.failures.length ?? 0}. Failures in all: ${r.failures}.`,
    ...(r.failures
      ? [
          '',
          'Failures:',
          '',
          ...r.targets.flatMap((t) =>
            grouped(t.failures)
              .slice(0, 15)
              .map((f) => `- ${md(t.target)}: ${md(f)}`),
          ),
        ]
      : []),
    ...(r.targets.some((t) => t.warnings.length)
      ? ['', 'Notes (not failures):', '', ...r.targets.flatMap((t) => t.warnings.slice(0, 5).map((w) => `- ${md(t.target)}: ${md(w)}`))]
      : []),
    '',
  ].join('\n');
}
