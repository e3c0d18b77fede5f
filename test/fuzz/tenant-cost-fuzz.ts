/**
 * Fuzz of three hostile-tenant classes ("hardening II"): what one tenant's object may cost the
 * controller every tenant shares, and where it may make the server fetch from.
 *
 * - cron schedules (per-object cost): seeded hostile CronWorkflows (0–20,000 schedules of every
 *   form — valid 5/6-field expressions, descriptors, `@every` with tiny/huge/garbage durations,
 *   strings of up to 100 KB, Unicode, numbers and objects —, odd timezones, a last scheduled
 *   time years back). In process: `schedulesOf` + `decideCron` return (never throw) within
 *   200 ms of CPU, and more than 20 schedules is a SpecError naming `spec.schedules` and the
 *   limit. Through the API server: each is stored or refused naming a field; a stored one gets
 *   a status from the controller (a SpecError exactly when the same parse in process refuses
 *   it), and the controller stays alive.
 * - metric labels (cardinality): seeded emissions (clashing names, kinds, label sets and
 *   buckets, label values of 0 B to 2 MiB, up to 30 labels, many series from a few workflows,
 *   negative counters) into a CustomMetricRegistry: `record` never throws, every refusal has a
 *   message, and after each batch the scrape is under 16 MiB and at most 10,000 series are held.
 *   Through the system: fan-outs of 20–150 pod-less steps declaring hostile labels; each ends
 *   within 90 s, the controller's scrape stays under 16 MiB and the controller alive.
 * - artifact locations (server-side fetch): seeded location records (S3, blob, GCS, http, raw;
 *   metadata, private, loopback and IPv6 hosts, odd schemes and ports, userinfo, Unicode, 10 KB
 *   and non-string endpoints). In process: the trust check throws nothing but OperationRefused
 *   'forbidden' naming the artifact, and passes only the repository's origin (and GCS); a
 *   steps output whose `from` is such a literal record is refused naming
 *   `outputs.artifacts[...]`, a record a step produced passes. Through the system: a workflow
 *   passing such a record on ends Error ("from names a location no step of this workflow
 *   produced") and no node of it records an output artifact.
 *
 * Every input carries a label (with its index) so that a failure can be replayed from the seed.
 *
 *   npx tsx test/fuzz/tenant-cost-fuzz.ts [per] [seed]   # the in-process parts alone; make fuzz runs all
 */
import { Registry } from 'prom-client';
import type { Artifact, Workflow } from '../../src/api/index.js';
import { LABEL_CRON_WORKFLOW, type CronWorkflow } from '../../src/api/cron-workflow.js';
import { CustomMetricRegistry } from '../../src/controller/custom-metric-registry.js';
import { decideCron, schedulesOf } from '../../src/cron/decide.js';
import { MAX_SCHEDULES } from '../../src/cron/schedule.js';
import { artifactVariable, collectOutputArtifacts, locationKey } from '../../src/engine/artifacts.js';
import { valueSource } from '../../src/engine/expressions.js';
import { ApiError } from '../../src/kube/errors.js';
import { CRON_WORKFLOWS, WORKFLOWS } from '../../src/kube/resource.js';
import { errorMessage } from '../../src/log/error-message.js';
import { createLogger } from '../../src/log/logger.js';
import type { Emission, MetricKind } from '../../src/engine/custom-metrics.js';
import { artifactOrigin, checkTrusted, endpointOrigin } from '../../src/operations/artifact-trust.js';
import { OperationRefused } from '../../src/operations/errors.js';
import { sleep } from '../soak/component.js';
import { Prng } from '../soak/prng.js';
import type { ClusterFuzzTarget } from './cluster-fuzz.js';
import { Tally } from './tally.js';

export const CRON_TARGET = 'cron schedules (per-object cost)';
export const METRICS_TARGET = 'metric labels (cardinality)';
export const ARTIFACTS_TARGET = 'artifact locations (server-side fetch)';

const FINAL = new Set(['Succeeded', 'Failed', 'Error']);
const MIB = 1024 * 1024;
const KB = 1000;
/** CPU one CronWorkflow may cost a decision (parse and decide). */
const CRON_CPU_MS = 200;
/** Largest scrape of a registry fed by hostile workflows. */
const SCRAPE_BOUND = 16 * MIB;
/** Most custom series the controller holds (its default limit). */
const SERIES_BOUND = 10_000;
/** How long a stored workflow may take to end (pod-less steps). */
const FINISH_MS = 90_000;

/** Workflows or objects stored through the system per target: about per/5, at least 3, at most 24. */
const throughSystem = (per: number) => Math.min(24, Math.max(3, Math.round(per / 5)));

const cpuMs = (since: NodeJS.CpuUsage) => {
  const d = process.cpuUsage(since);
  return (d.user + d.system) / 1000;
};

/** `text` cut for a message. */
const clip = (text: string, n = 120) => (text.length > n ? `${text.slice(0, n)}… (${text.length} chars)` : text);

/** A pod-less workflow spec: one suspend step of no duration (ends Succeeded without a pod). */
const PODLESS_SPEC = { entrypoint: 'main', templates: [{ name: 'main', suspend: { duration: '0' } }] };

// ---------------------------------------------------------------------------------------------
// 1. Cron schedules

interface CronCase {
  label: string;
  cron: CronWorkflow;
  /** Schedules counted as the controller counts them (list and `schedule`), when the list is one. */
  count?: number;
}

const DESCRIPTORS = ['@hourly', '@daily', '@weekly', '@monthly', '@yearly', '@annually', '@midnight', '@reboot', '@never', '@HOURLY', '@'];
const DURATIONS = [
  '1s',
  '0s',
  '0',
  '1ns',
  '999ms',
  '-1s',
  '1.5s',
  '0.000001s',
  '1h30m',
  '87600h',
  '2562047h47m16.854775807s',
  '9223372036854775807ns',
  '9999999999999999999h',
  '1e9h',
  'abc',
  '',
  '5',
  '1s1s1s1s',
  '１s',
  'NaNs',
  'Infinityh',
];
const TIMEZONES = ['Europe/Berlin', 'America/New_York', 'Asia/Kathmandu', 'Pacific/Chatham', 'UTC', 'Etc/GMT+12', 'Australia/Lord_Howe'];
const ODD_TIMEZONES = [
  'Mars/Olympus',
  'Europe/Nowhere',
  '',
  ' ',
  '+05:30',
  'UTC\u0000',
  '../../etc/localtime',
  'Europe/Berlin ',
  'utc',
  '😀',
];

/** One field of a cron expression: valid, out of range or garbage. */
function cronField(rng: Prng, max: number, clean: boolean): string {
  if (clean) return rng.pick(['*', `*/${rng.int(1, max)}`, String(rng.int(1, max)), `${rng.int(0, max >> 1)}-${rng.int(max >> 1, max)}`]);
  return rng.weighted<() => string>([
    [6, () => '*'],
    [3, () => `*/${rng.int(1, max)}`],
    [3, () => String(rng.int(0, max))],
    [2, () => `${rng.int(0, max >> 1)}-${rng.int(max >> 1, max)}`],
    [2, () => Array.from({ length: rng.int(2, 6) }, () => rng.int(0, max)).join(',')],
    [1, () => rng.pick(['MON-FRI', 'JAN', 'SUN', '?', 'L', '5#3', 'W', '15W', 'LW'])],
    [1, () => rng.pick(['99', '-5', '*/0', '1-1000000', '*/9999999', '0-0', 'x', '**', ',', '-', '1,,2', '٣', '＊'])],
  ])();
}

/** One schedule text (or a value that is not one); `budget.left` bounds the characters of the whole list. */
function scheduleValue(rng: Prng, budget: { left: number }, clean = false): { value: unknown; kind: string } {
  if (clean) {
    const kind = rng.pick(['five', 'six', 'descriptor', 'every']);
    const fields = [59, 59, 23, 28, 12, 7].slice(kind === 'six' ? 0 : 1).map((max) => cronField(rng, max, true));
    const value =
      kind === 'descriptor'
        ? rng.pick(DESCRIPTORS.slice(0, 7))
        : kind === 'every'
          ? `@every ${rng.pick(['1s', '1h30m', '87600h', '2562047h47m16.854775807s', '999999h'])}`
          : fields.join(' ');
    return { value, kind };
  }
  const kind = rng.weighted<string>([
    [20, 'five'],
    [8, 'six'],
    [6, 'descriptor'],
    [8, 'every'],
    [3, 'garbage'],
    [2, 'overlong'],
    [2, 'unicode'],
    [2, 'not-a-string'],
  ]);
  const fields = (n: number) => [59, 23, 31, 12, 7, 59].slice(0, n).map((max) => cronField(rng, max, false));
  let value: unknown;
  switch (kind) {
    case 'five':
      value = fields(5).join(' ');
      break;
    case 'six':
      value = [cronField(rng, 59, false), ...fields(5)].join(' ');
      break;
    case 'descriptor':
      value = rng.pick(DESCRIPTORS);
      break;
    case 'every':
      value = `@every ${rng.pick(DURATIONS)}`;
      break;
    case 'garbage':
      value = rng.pick([
        '',
        ' ',
        '* * * *',
        '* * * * * * *',
        '@every',
        '@every  1s 1s',
        '\n* * * * *\n',
        '0 0 30 2 *',
        '0 0 31 4 *',
        '* * * * * ?',
      ]);
      break;
    case 'overlong': {
      const n = Math.min(budget.left, rng.pick([257, 1_000, 10_000, 100_000]));
      const unit = rng.pick(['x', '* ', '1,', '@every 1s ', '😀']);
      value = unit.repeat(Math.max(1, Math.floor(n / unit.length)));
      break;
    }
    case 'unicode':
      value = rng.pick(['＊ ＊ ＊ ＊ ＊', '٣ * * * *', '😀 * * * *', '\u0000', '\u202e* * * * *', 'é * * * *', '\ud800 * * * *']);
      break;
    default:
      value = rng.pick<unknown>([0, 42, -1, 1e308, true, null, {}, { schedule: '* * * * *' }, [], ['* * * * *']]);
  }
  budget.left -= typeof value === 'string' ? value.length : 8;
  return { value, kind };
}

/** A hostile CronWorkflow; `maxChars` bounds its schedule text (what the API server accepts in a body). */
function hostileCron(rng: Prng, i: number, nowMs: number, maxChars: number): CronCase {
  const count = rng.weighted<() => number>([
    [2, () => 0],
    [10, () => rng.int(1, 5)],
    [6, () => rng.int(6, MAX_SCHEDULES)],
    [4, () => rng.int(MAX_SCHEDULES + 1, 25)],
    [3, () => rng.int(100, 2_000)],
    [2, () => rng.int(2_000, 20_000)],
  ])();
  const budget = { left: maxChars };
  // A third are clean (every schedule valid): their decisions, from years back, are what is timed.
  const clean = rng.chance(0.35);
  const kinds = new Map<string, number>();
  const schedules: unknown[] = [];
  for (let j = 0; j < count; j++) {
    // Once the text budget is spent, the rest are short valid expressions (the count is the point).
    const s = budget.left > 300 ? scheduleValue(rng, budget, clean) : { value: '* * * * *', kind: 'five' };
    schedules.push(s.value);
    kinds.set(s.kind, (kinds.get(s.kind) ?? 0) + 1);
  }
  const spec: Record<string, unknown> = { workflowSpec: PODLESS_SPEC, successfulJobsHistoryLimit: 1, failedJobsHistoryLimit: 1 };
  const parts: string[] = [];
  if (clean || rng.chance(0.9)) spec.schedules = schedules;
  else spec.schedules = rng.pick<unknown>(['* * * * *', 7, { a: 1 }, null]);
  if (rng.chance(0.25)) {
    const s = scheduleValue(rng, budget, clean);
    spec.schedule = s.value;
    parts.push(`schedule ${s.kind}`);
  }
  const tz = clean
    ? rng.pick([undefined, ...TIMEZONES])
    : rng.weighted<() => unknown>([
        [10, () => undefined],
        [5, () => rng.pick(TIMEZONES)],
        [3, () => rng.pick(ODD_TIMEZONES)],
        [2, () => 'A'.repeat(rng.pick([65, 1_000, Math.max(65, Math.min(100_000, budget.left))]))],
        [2, () => rng.pick<unknown>([42, {}, [], true, { name: 'UTC' }])],
      ])();
  if (tz !== undefined) spec.timezone = tz;
  if (rng.chance(0.3)) spec.concurrencyPolicy = rng.pick(['Allow', 'Forbid', 'Replace']);
  if (rng.chance(0.2)) spec.startingDeadlineSeconds = rng.pick([0, 1, 60, 1e9]);
  const years = rng.weighted<() => number | undefined>([
    [3, () => undefined],
    [4, () => rng.int(1, 50)],
    [1, () => 2025], // year 1
  ])();
  const yearMs = 365.25 * 24 * 3600_000;
  const status =
    years === undefined ? undefined : { lastScheduledTime: new Date(Math.max(-62135596800000, nowMs - years * yearMs)).toISOString() };
  const cron = {
    apiVersion: 'plugflow.io/v1alpha1',
    kind: 'CronWorkflow',
    metadata: {
      name: `fz-cron-${i}`,
      namespace: 'fuzz',
      uid: `uid-${i}`,
      creationTimestamp: new Date(nowMs - rng.int(0, 20) * yearMs).toISOString(),
    },
    spec,
    ...(status ? { status } : {}),
  } as unknown as CronWorkflow;
  const listed = Array.isArray(spec.schedules) ? (spec.schedules as unknown[]).length : undefined;
  const described = [...kinds].map(([k, n]) => `${n} ${k}`).join(', ');
  const label = [
    `cron #${i}${clean ? ' (clean)' : ''}`,
    listed === undefined ? `schedules ${clip(JSON.stringify(spec.schedules), 40)}` : `${listed} schedules (${described || 'none'})`,
    ...parts,
    tz === undefined ? '' : `timezone ${clip(JSON.stringify(tz) ?? String(tz), 40)}`,
    years === undefined ? '' : `last scheduled ${years} years ago`,
  ]
    .filter(Boolean)
    .join('; ');
  return { label, cron, ...(listed === undefined ? {} : { count: listed + (spec.schedule ? 1 : 0) }) };
}

/** Parse and decide once, timed; the cheapest of up to three runs over the bound (preemption). */
function decideTimed(
  cron: CronWorkflow,
  nowMs: number,
): { ms: number; error?: unknown; parsed?: ReturnType<typeof schedulesOf>; decision?: ReturnType<typeof decideCron> } {
  let best: ReturnType<typeof decideTimed> | undefined;
  for (let run = 0; run < 3 && (!best || best.ms > CRON_CPU_MS); run++) {
    const start = process.cpuUsage();
    let out: Omit<ReturnType<typeof decideTimed>, 'ms'>;
    try {
      const parsed = schedulesOf(cron);
      out = { parsed, decision: decideCron(cron, [], nowMs, parsed) };
    } catch (error) {
      out = { error };
    }
    const ms = cpuMs(start);
    if (!best || ms < best.ms) best = { ...out, ms };
    if (out.error) break;
  }
  return best!;
}

/** Checks one CronWorkflow in process; counts it in the tally; the CPU it took (ms). */
function checkCronInProcess(c: CronCase, nowMs: number, tally: Tally): number {
  const t = tally.of(CRON_TARGET);
  t.tried++;
  const r = decideTimed(c.cron, nowMs);
  if (r.error) {
    tally.fail(CRON_TARGET, `${c.label}: threw ${clip(errorMessage(r.error), 200)}`);
    return r.ms;
  }
  if (r.ms > CRON_CPU_MS) tally.fail(CRON_TARGET, `${c.label}: ${r.ms.toFixed(0)} ms of CPU to parse and decide (bound ${CRON_CPU_MS})`);
  const parsed = r.parsed!;
  const specError = r.decision!.status.conditions?.find((x) => x.type === 'SpecError');
  if (parsed.ok) {
    t.accepted++;
    if (specError) tally.fail(CRON_TARGET, `${c.label}: parsed, yet the decision carries a SpecError: ${clip(specError.message ?? '')}`);
  } else {
    t.rejected++;
    if (!/\bspec\.(schedules?|timezone)\b/.test(parsed.error))
      tally.fail(CRON_TARGET, `${c.label}: refused without naming a field: ${clip(parsed.error, 200)}`);
    if (specError?.message !== parsed.error)
      tally.fail(
        CRON_TARGET,
        `${c.label}: refused (${clip(parsed.error, 80)}) but the decision has no SpecError condition with that message`,
      );
  }
  if (c.count !== undefined && c.count > MAX_SCHEDULES) {
    const message = parsed.ok ? '' : parsed.error;
    if (!(message.includes('spec.schedules') && new RegExp(`\\b${MAX_SCHEDULES}\\b`).test(message) && specError))
      tally.fail(
        CRON_TARGET,
        `${c.label}: ${c.count} schedules must be a SpecError naming spec.schedules and the limit ${MAX_SCHEDULES}, got ${parsed.ok ? 'a parse' : clip(message, 160)}`,
      );
  }
  return r.ms;
}

/** Whether an API server refusal names a field of the object. */
const namesField = (message: string) => /\b(spec|metadata|status)(\.[A-Za-z_]\w*|\[)/.test(message);

/**
 * Cron schedules: `per` hostile CronWorkflows decided in process, then a few created in the API
 * server; the stored ones must get a status from the controller and are deleted afterwards.
 */
export async function fuzzCronSchedules(
  rng: Prng,
  t: ClusterFuzzTarget | undefined,
  tally: Tally,
  per: number,
  say: (line: string) => void = () => {},
): Promise<void> {
  const nowMs = Date.now();
  let worst = { ms: 0, label: '' };
  for (let i = 0; i < per; i++) {
    const c = hostileCron(rng, i, nowMs, 4 * MIB);
    const ms = checkCronInProcess(c, nowMs, tally);
    if (ms > worst.ms) worst = { ms, label: c.label };
  }
  say(`  cron: ${per} in process, worst ${worst.ms.toFixed(0)} ms CPU (${clip(worst.label, 100)})`);
  if (!t) return;

  // Through the API server: bodies of at most 512 KB of schedule text (the API server's own
  // body limit is not the subject), created as the tenant would.
  const n = throughSystem(per);
  const stored: CronCase[] = [];
  const entry = tally.of(CRON_TARGET);
  for (let i = 0; i < n; i++) {
    const c = hostileCron(rng, per + i, Date.now(), 512 * KB);
    const { uid: _uid, creationTimestamp: _created, namespace: _ns, ...metadata } = c.cron.metadata;
    entry.tried++;
    try {
      const created = await t.client.create<CronWorkflow>(CRON_WORKFLOWS, t.namespace, { ...c.cron, metadata, status: undefined });
      entry.accepted++;
      stored.push({ ...c, cron: created });
    } catch (err) {
      const message = errorMessage(err);
      if (err instanceof ApiError && err.code >= 400 && err.code < 500 && namesField(err.message)) entry.rejected++;
      else tally.fail(CRON_TARGET, `${c.label}: the API server refused it without naming a field: ${clip(message, 200)}`);
    }
  }
  // Each stored one is looked at: a status, with a SpecError exactly when the parse refuses it.
  const deadline = Date.now() + 30_000;
  let pending = stored;
  while (pending.length && Date.now() < deadline) {
    await sleep(1000);
    const now = (await t.client.list<CronWorkflow>(CRON_WORKFLOWS, { namespace: t.namespace })).items;
    const byName = new Map(now.map((x) => [x.metadata.name, x]));
    pending = pending.filter((c) => {
      const got = byName.get(c.cron.metadata.name);
      if (!got?.status?.phase) return true;
      const parsed = schedulesOf(got);
      const specError = got.status.conditions?.find((x) => x.type === 'SpecError');
      if (parsed.ok && specError)
        tally.fail(
          CRON_TARGET,
          `${c.label}: stored; the controller reports a SpecError the parse does not: ${clip(specError.message ?? '')}`,
        );
      if (!parsed.ok && specError?.message !== parsed.error)
        tally.fail(CRON_TARGET, `${c.label}: stored; the controller shows no SpecError for ${clip(parsed.error, 120)}`);
      return false;
    });
  }
  for (const c of pending) tally.fail(CRON_TARGET, `${c.label}: stored, but the controller wrote no status within 30 s`);
  await controllerAlive(t, tally, CRON_TARGET, 'after hostile CronWorkflows');
  for (const c of stored) await t.client.delete(CRON_WORKFLOWS, t.namespace, c.cron.metadata.name!).catch(() => undefined);
  await sleep(500);
  const runs = (await t.client.list<Workflow>(WORKFLOWS, { namespace: t.namespace, labelSelector: LABEL_CRON_WORKFLOW })).items;
  for (const w of runs) await t.client.delete(WORKFLOWS, t.namespace, w.metadata.name!).catch(() => undefined);
  say(`  cron: ${n} through the API server, ${stored.length} stored (${runs.length} runs they started, deleted)`);
}

// ---------------------------------------------------------------------------------------------
// 2. Metric labels

const BIG = 'x'.repeat(2 * MIB);
const LABEL_KEYS = ['a', 'b', 'step', 'node', 'phase', 'A1', '_', '_x', 'quantile', 'le', 'k'.repeat(100), 'z'.repeat(1000)];

/** A label value: short and mostly distinct (many series), or of a hostile size (0 B to 2 MiB). */
function labelValue(rng: Prng, hostile: boolean): string {
  if (!hostile || rng.chance(0.5))
    return rng.chance(0.9) ? `v${rng.int(0, 1_000_000)}` : rng.pick(['', 'Succeeded', 'é', '"\\\n{}', '\u0000']);
  return rng.weighted<() => string>([
    [3, () => '😀'.repeat(rng.int(1, 200))],
    [4, () => `${'y'.repeat(rng.int(200, 300))}${rng.int(0, 99)}`],
    [2, () => BIG.slice(0, rng.int(1_000, 5_000))],
    [1, () => BIG.slice(0, rng.pick([MIB, 2 * MIB]))],
  ])();
}

/** Increasing finite buckets, 1–64 of them, of odd magnitudes. */
function buckets(rng: Prng): number[] {
  const set = new Set<number>();
  const n = rng.int(1, 64);
  while (set.size < n) set.add(rng.pick([-1e308, -1, 0, 1e-300, 0.001, 1, 7, 1e6, 1e308]) * (set.size ? rng.next() * 10 : 1));
  return [...set].filter(Number.isFinite).sort((x, y) => x - y);
}

interface MetricShape {
  name: string;
  kind: MetricKind;
  keys: string[];
  buckets?: number[];
}

function metricShape(rng: Prng, i: number): MetricShape {
  const kind = rng.pick<MetricKind>(['counter', 'gauge', 'histogram']);
  const keys = new Set<string>();
  const n = rng.weighted<() => number>([
    [6, () => rng.int(0, 4)],
    [3, () => rng.int(5, 16)],
    [1, () => rng.int(17, 30)],
  ])();
  while (keys.size < n) keys.add(rng.chance(0.8) ? `l${rng.int(0, 40)}` : rng.pick(LABEL_KEYS));
  const name = rng.weighted<() => string>([
    [10, () => `fz_m${i}`],
    [1, () => `fz_${'n'.repeat(196)}`],
    [1, () => 'plugflow_custom_metrics_dropped_total'], // the registry's own
  ])();
  return { name, kind, keys: [...keys], ...(kind === 'histogram' ? { buckets: buckets(rng) } : {}) };
}

function emission(rng: Prng, shapes: MetricShape[]): { e: Emission; label: string } {
  // Mostly one of the declared shapes; sometimes a clash: the name with another kind, labels or buckets.
  const base = rng.pick(shapes);
  const shape = rng.chance(0.15) ? { ...metricShape(rng, 0), name: base.name } : base;
  const labels: Record<string, string> = {};
  const hostile = rng.chance(0.3);
  for (const k of shape.keys) labels[k] = labelValue(rng, hostile);
  const realtime = shape.kind === 'gauge' && rng.chance(0.1);
  const value = rng.pick([1, 0, -1, -1e9, 0.5, 1e308, rng.int(-100, 1_000)]);
  const e: Emission = {
    name: shape.name,
    help: rng.pick(['h', 'a help text', 'é😀'.repeat(100)]),
    kind: shape.kind,
    labels,
    ...(realtime ? { realtime: { startMs: Date.now() - rng.int(0, 1e9) } } : { value }),
    ...(shape.kind === 'histogram' ? { buckets: shape.buckets } : {}),
    where: `template "t".metrics.vendorP[${shape.name}]`,
  };
  const sizes = Object.entries(labels)
    .map(([k, v]) => `${clip(k, 12)}=${v.length}`)
    .join(',');
  return { e, label: `${shape.kind} ${clip(shape.name, 24)}{${clip(sizes, 120)}}${realtime ? ' realtime' : ` value ${value}`}` };
}

const HEAVY_BUCKETS = Array.from({ length: 64 }, (_, i) => 2 ** (i - 20));

/** A histogram series as large as the per-series bounds let it be: 64 buckets, label values of 1,000 characters in all. */
function heavyEmission(rng: Prng): { e: Emission; label: string } {
  const v = (c: string) => `${c.repeat(245)}${String(rng.int(0, 99_999)).padStart(5, '0')}`;
  const labels = { a: v('a'), b: v('b'), c: v('c'), d: v('d') };
  const e: Emission = {
    name: 'fz_heavy',
    help: 'h',
    kind: 'histogram',
    labels,
    value: rng.next() * 1e6,
    buckets: HEAVY_BUCKETS,
    where: 'heavy',
  };
  return { e, label: 'heavy histogram fz_heavy (64 buckets, 4 labels of 250 characters)' };
}

/** In process: `per × 20` emissions in batches into a fresh registry. */
async function fuzzMetricRegistry(
  rng: Prng,
  tally: Tally,
  count: number,
): Promise<{ series: number; worstScrape: number; reasons: string }> {
  const registry = new Registry();
  const reg = new CustomMetricRegistry(registry, createLogger('fuzz', 'error'));
  const t = tally.of(METRICS_TARGET);
  const shapes = Array.from({ length: 12 }, (_, i) => metricShape(rng, i));
  const workflows = ['ns-a/w1', 'ns-a/w2', 'ns-b/w1', 'ns-c/w9'];
  let worstScrape = 0;
  const reasons = new Map<string, number>();
  let breached = false;
  try {
    for (let done = 0, batch = 0; done < count; batch++) {
      // One batch in seven is heavy: 64-bucket histogram series with labels just under the size bounds.
      const heavy = rng.chance(1 / 7);
      const size = Math.min(count - done, rng.int(heavy ? 40 : 1, 60));
      const items = Array.from({ length: size }, () => (heavy ? heavyEmission(rng) : emission(rng, shapes)));
      const workflow = heavy
        ? rng.pick(['ns-h/heavy-1', 'ns-h/heavy-2'])
        : rng.chance(0.9)
          ? rng.pick(workflows)
          : `ns-${rng.int(0, 5)}/w${rng.int(0, 1_000)}`;
      done += size;
      t.tried += size;
      // One by one, so a failure names the emission that caused it.
      for (const { e, label } of items) {
        try {
          const refused = reg.record([e], workflow);
          for (const r of refused) reasons.set(r.reason, (reasons.get(r.reason) ?? 0) + 1);
          if (refused.length) t.rejected++;
          else t.accepted++;
          for (const r of refused)
            if (!(typeof r.message === 'string' && r.message.trim().length > 0))
              tally.fail(METRICS_TARGET, `batch ${batch}: ${label} from ${workflow}: refused (${r.reason}) without a message`);
        } catch (err) {
          tally.fail(METRICS_TARGET, `batch ${batch}: ${label} from ${workflow}: record threw ${clip(errorMessage(err), 160)}`);
        }
      }
      if (reg.size > SERIES_BOUND)
        tally.fail(METRICS_TARGET, `after batch ${batch}: the registry holds ${reg.size} series (bound ${SERIES_BOUND})`);
      if (breached) continue; // reported once: later scrapes only grow; the rest still goes through record
      const bytes = Buffer.byteLength(await registry.metrics());
      worstScrape = Math.max(worstScrape, bytes);
      if (bytes >= SCRAPE_BOUND) {
        breached = true;
        tally.fail(
          METRICS_TARGET,
          `after batch ${batch} (${done} emissions): the scrape is ${(bytes / MIB).toFixed(1)} MiB (bound 16) with ${reg.size} series`,
        );
      }
    }
    return { series: reg.size, worstScrape, reasons: [...reasons].map(([r, n]) => `${n} ${r}`).join(', ') };
  } finally {
    reg.stop();
  }
}

/** A hostile label of a workflow's metric (rendered by the controller per node). */
function workflowLabelValue(rng: Prng): string {
  return rng.pick([
    "{{=sprig.repeat(1000000, 'x')}}{{inputs.parameters.i}}",
    "{{=sprig.repeat(250, 'y')}}{{inputs.parameters.i}}",
    `{{inputs.parameters.i}}-${rng.int(0, 1e6)}`,
    '{{inputs.parameters.i}}',
    '{{node.name}}',
    '{{status}}',
    '{{duration}}',
    '😀'.repeat(120),
    '"\\\n}{',
    '',
  ]);
}

function workflowMetric(rng: Prng, name: string, perNode: boolean): Record<string, unknown> {
  const kind = rng.pick<MetricKind>(['counter', 'gauge', 'histogram']);
  const keys = new Set<string>();
  const n = rng.int(1, 16);
  while (keys.size < n) keys.add(rng.chance(0.85) ? `l${rng.int(0, 30)}` : rng.pick(['k'.repeat(rng.int(50, 500)), 'quantile', '_', 'le']));
  const value =
    kind === 'counter'
      ? rng.pick(['1', '-1', '{{duration}}', '1e308'])
      : perNode
        ? rng.pick(['{{inputs.parameters.i}}', '{{duration}}'])
        : '{{workflow.duration}}';
  return {
    name,
    help: 'fuzz',
    labels: [...keys].map((key) => ({
      key,
      value: perNode ? workflowLabelValue(rng) : rng.pick(['{{workflow.name}}', "{{=sprig.repeat(100000, 'w')}}"]),
    })),
    [kind]: kind === 'histogram' ? { value, buckets: rng.pick([[1], [0.001, 1, 1000], [-1e9, 0, 1e9], HEAVY_BUCKETS]) } : { value },
  };
}

/** A fan-out of `fan` pod-less leaves whose template declares hostile metrics (and the workflow too). */
function metricWorkflow(rng: Prng, name: string, fan: number): { wf: unknown; label: string } {
  const metrics = Array.from({ length: rng.int(1, 4) }, () => workflowMetric(rng, `fz_sys_m${rng.int(0, 7)}`, true));
  const wf = {
    apiVersion: 'plugflow.io/v1alpha1',
    kind: 'Workflow',
    metadata: { name },
    spec: {
      entrypoint: 'main',
      metrics: { vendorP: [workflowMetric(rng, `fz_sys_wf${rng.int(0, 3)}`, false)] },
      templates: [
        {
          name: 'main',
          steps: [
            [
              {
                name: 'fan',
                template: 'leaf',
                arguments: { parameters: [{ name: 'i', value: '{{item}}' }] },
                withSequence: { count: String(fan) },
              },
            ],
          ],
        },
        { name: 'leaf', inputs: { parameters: [{ name: 'i' }] }, suspend: { duration: '0' }, metrics: { vendorP: metrics } },
      ],
    },
  };
  const label = `${name}: ${fan} leaves, metrics ${metrics.map((m) => `${m.name as string}(${(m.labels as unknown[]).length} labels)`).join(', ')}`;
  return { wf, label };
}

/** The controller's /metrics, read up to 64 MiB: its size and the text (when under the bound). */
async function scrape(url: string, token: string): Promise<{ status: number; bytes: number; text?: string; error?: string }> {
  try {
    const res = await fetch(url, { headers: { authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(60_000) });
    const chunks: Buffer[] = [];
    let bytes = 0;
    const reader = res.body!.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      bytes += value.byteLength;
      if (bytes <= SCRAPE_BOUND) chunks.push(Buffer.from(value));
      if (bytes > 64 * MIB) {
        await reader.cancel();
        break;
      }
    }
    return { status: res.status, bytes, ...(bytes < SCRAPE_BOUND ? { text: Buffer.concat(chunks).toString('utf8') } : {}) };
  } catch (err) {
    return { status: 0, bytes: 0, error: errorMessage(err) };
  }
}

/** The controller process is up and answers /healthz. */
async function controllerAlive(t: ClusterFuzzTarget, tally: Tally, target: string, when: string): Promise<void> {
  if (t.controllerAlive && !t.controllerAlive()) return tally.fail(target, `${when}: the controller is not running`);
  if (!t.controllerMetricsUrl) return;
  const url = t.controllerMetricsUrl.replace(/\/metrics$/, '/healthz');
  for (let i = 0; i < 15; i++) {
    const status = await fetch(url, { signal: AbortSignal.timeout(5_000) }).then(
      (r) => r.status,
      () => 0,
    );
    if (status === 200) return;
    await sleep(1000); // a restart by its supervisor is a failure of its own (the processes check)
  }
  tally.fail(target, `${when}: the controller's /healthz did not answer 200 within 15 s`);
}

/** Stored workflows each reach a final phase within 90 s; the stored ones, by name. */
async function awaitFinal(t: ClusterFuzzTarget, names: string[]): Promise<Map<string, Workflow>> {
  const deadline = Date.now() + FINISH_MS;
  const final = new Map<string, Workflow>();
  while (Date.now() < deadline && final.size < names.length) {
    const list = (await t.client.list<Workflow>(WORKFLOWS, { namespace: t.namespace })).items;
    for (const w of list) if (names.includes(w.metadata.name!) && FINAL.has(w.status?.phase ?? '')) final.set(w.metadata.name!, w);
    if (final.size < names.length) await sleep(2000);
  }
  return final;
}

/**
 * Metric labels: `per × 20` emissions into a registry in process, then a few fan-out workflows
 * with hostile metric labels through the system and a scrape of the controller.
 */
export async function fuzzMetricLabels(
  rng: Prng,
  t: ClusterFuzzTarget | undefined,
  tally: Tally,
  per: number,
  say: (line: string) => void = () => {},
): Promise<void> {
  const pure = await fuzzMetricRegistry(rng, tally, per * 20);
  say(
    `  metric labels: ${per * 20} emissions in process, ${pure.series} series held, largest scrape ${(pure.worstScrape / MIB).toFixed(2)} MiB; refused: ${pure.reasons || 'none'}`,
  );
  if (!t) return;

  const n = throughSystem(per);
  const entry = tally.of(METRICS_TARGET);
  const stored: { name: string; label: string }[] = [];
  for (let i = 0; i < n; i++) {
    const { wf, label } = metricWorkflow(rng, `fz-metrics-${i}`, rng.int(20, 150));
    entry.tried++;
    try {
      await t.client.create(WORKFLOWS, t.namespace, wf);
      entry.accepted++;
      stored.push({ name: `fz-metrics-${i}`, label });
    } catch (err) {
      if (err instanceof ApiError && err.code >= 400 && err.code < 500 && namesField(err.message)) entry.rejected++;
      else tally.fail(METRICS_TARGET, `${label}: the API server refused it without naming a field: ${clip(errorMessage(err), 200)}`);
    }
  }
  const final = await awaitFinal(
    t,
    stored.map((s) => s.name),
  );
  for (const s of stored) if (!final.has(s.name)) tally.fail(METRICS_TARGET, `${s.label}: no final phase within ${FINISH_MS / 1000} s`);
  if (t.controllerMetricsUrl) {
    const got = await scrape(t.controllerMetricsUrl, t.token);
    if (got.status !== 200) tally.fail(METRICS_TARGET, `the controller's /metrics answered ${got.status || got.error}`);
    else if (got.bytes >= SCRAPE_BOUND)
      tally.fail(
        METRICS_TARGET,
        `after ${stored.length} hostile workflows the controller's scrape is ${(got.bytes / MIB).toFixed(1)} MiB (bound 16)`,
      );
    const series = (got.text ?? '').split('\n').filter((l) => l.includes(`workflow_namespace="${t.namespace}"`));
    say(
      `  metric labels: ${stored.length} workflows through the system (${[...final.values()].map((w) => w.status?.phase).join(', ')}), scrape ${(got.bytes / MIB).toFixed(2)} MiB with ${series.length} lines of the namespace`,
    );
  } else tally.warn(METRICS_TARGET, "no controller metrics URL: the controller's scrape was not checked");
  await controllerAlive(t, tally, METRICS_TARGET, 'after workflows with hostile metric labels');
  for (const s of stored) await t.client.delete(WORKFLOWS, t.namespace, s.name).catch(() => undefined);
}

// ---------------------------------------------------------------------------------------------
// 3. Artifact locations

/** The one repository store trusted: an insecure (plain HTTP) object store of the namespace. */
const TRUSTED_HOST = 'minio.fuzz.svc';
const TRUSTED_PORT = '9000';
const TRUSTED_ORIGIN = endpointOrigin(`${TRUSTED_HOST}:${TRUSTED_PORT}`, true)!;
/** An artifact a step of the workflow produced (the one `produced` knows). */
const REAL: Artifact = {
  name: 'out',
  vendorAObject: { bucket: 'fz-real', key: 'wf/a/out.tgz', endpoint: `${TRUSTED_HOST}:${TRUSTED_PORT}`, insecure: true },
};
const PHRASE = 'from names a location no step of this workflow produced';

const HOSTS: { host: string; trusted: boolean | 'either' }[] = [
  { host: TRUSTED_HOST, trusted: true },
  { host: TRUSTED_HOST.toUpperCase(), trusted: true },
  { host: `${TRUSTED_HOST}.`, trusted: false },
  { host: `${TRUSTED_HOST}.evil.example`, trusted: false },
  { host: `evil.example#${TRUSTED_HOST}`, trusted: false },
  { host: `169.254.169.254#@${TRUSTED_HOST}`, trusted: false },
  { host: '169.254.169.254', trusted: false },
  { host: '10.0.0.1', trusted: false },
  { host: '10.96.0.1', trusted: false },
  { host: '127.0.0.1', trusted: false },
  { host: '0.0.0.0', trusted: false },
  { host: '2130706433', trusted: false },
  { host: '0x7f.1', trusted: false },
  { host: '[::1]', trusted: false },
  { host: '[::ffff:a9fe:a9fe]', trusted: false },
  { host: '[fe80::1]', trusted: false },
  { host: 'localhost', trusted: false },
  { host: 'kubernetes.default.svc', trusted: false },
  { host: 'metadata.google.internal', trusted: false },
  { host: 'minıo.fuzz.svc', trusted: 'either' },
  { host: 'ｍｉｎｉｏ.fuzz.svc', trusted: 'either' },
  { host: '☃.example', trusted: false },
  { host: '', trusted: false },
];
const SCHEMES = ['', 'http://', 'https://', 'HTTP://', 'ftp://', 'file://', 'gopher://', '//'];
const PORTS = ['', `:${TRUSTED_PORT}`, ':80', ':443', ':0', ':65536', ':-1', ':abc'];
const USERINFO = ['', 'user:pass@', `${TRUSTED_HOST}:${TRUSTED_PORT}@`];
const PATHS = ['', '/', '/a/b?c=d#e', '/../../etc'];

interface HostileEndpoint {
  value: unknown;
  /** Whether its origin is the trusted one given how the store reads a bare host (http when insecure). */
  trusted: (bareIsHttp: boolean) => boolean | 'either';
  label: string;
}

function hostileEndpoint(rng: Prng): HostileEndpoint {
  const shape = rng.weighted<string>([
    [14, 'parts'],
    [1, 'long'],
    [1, 'not-a-string'],
  ]);
  if (shape === 'long') {
    const unit = rng.pick(['a', '%', 'é', `${TRUSTED_HOST}:${TRUSTED_PORT}/`]);
    const value = unit.repeat(rng.int(2_000, 10_000)).slice(0, 10_000);
    // The trusted host followed by a long path is the trusted origin, when read as HTTP.
    const trusted = (bareIsHttp: boolean) => (unit.startsWith(TRUSTED_HOST) && bareIsHttp ? ('either' as const) : false);
    return { value, trusted, label: `a ${value.length}-char endpoint of ${JSON.stringify(unit)}` };
  }
  if (shape === 'not-a-string') {
    const value = rng.pick<unknown>([0, 42, 2130706433, -1, true, null, {}, { host: TRUSTED_HOST }, [], ['169.254.169.254']]);
    return { value, trusted: () => false, label: `endpoint ${JSON.stringify(value)}` };
  }
  const scheme = rng.pick(SCHEMES);
  // Near misses of the trusted store are as likely as strangers: its host and port half of the time each.
  const { host, trusted: hostTrusted } = rng.chance(0.5) ? HOSTS[rng.int(0, 1)]! : rng.pick(HOSTS);
  const port = rng.chance(0.5) ? `:${TRUSTED_PORT}` : rng.pick(PORTS);
  const userinfo = rng.chance(0.2) ? rng.pick(USERINFO) : '';
  const path = rng.chance(0.3) ? rng.pick(PATHS) : '';
  const value = `${scheme}${userinfo}${host}${port}${path}`;
  // Trusted only with the trusted host and port, over plain HTTP (explicit, or a bare host the store reads as HTTP).
  const trusted = (bareIsHttp: boolean): boolean | 'either' => {
    if (port !== `:${TRUSTED_PORT}` || hostTrusted === false) return false;
    if (host.includes('#')) return false;
    if (scheme === '//') return 'either'; // read as http:////host: browsers' URL rules drop the extra slashes
    const http = /^http:\/\//i.test(scheme) || (scheme === '' && bareIsHttp);
    if (!http) return false;
    return hostTrusted;
  };
  return { value, trusted, label: `endpoint ${JSON.stringify(value)}` };
}

interface HostileRecord {
  record: Artifact;
  /** Whether the trust check must pass it (true), must refuse it (false), or may do either. */
  expect: boolean | 'either';
  label: string;
}

function hostileRecord(rng: Prng, i: number): HostileRecord {
  const name = rng.pick(['leak', 'out', 'é😀', 'a"b', 'x'.repeat(300), `art-${i}`]);
  const kind = rng.weighted<string>([
    [6, 'vendorAObject'],
    [3, 'vendorB'],
    [2, 'vendorCObject'],
    [2, 'http'],
    [1, 'raw'],
    [2, 'mixed'],
  ]);
  const ep = hostileEndpoint(rng);
  const insecure = rng.pick<unknown>([undefined, true, false, 'false', 1, 0]);
  const s3 = () => ({
    bucket: rng.pick(['b', 'fz-leak', '', 'x'.repeat(300)]),
    key: rng.pick(['k', 'a/b/c.tgz', '../../etc/passwd', '']),
    endpoint: ep.value,
    ...(insecure === undefined ? {} : { insecure }),
  });
  const blob = () => ({ endpoint: ep.value, container: 'c', blob: rng.pick(['b', 'a/b']) });
  const gcs = () => ({ bucket: rng.pick(['b', '']), key: 'k' });
  const http = () => ({ url: typeof ep.value === 'string' ? ep.value : 'http://169.254.169.254/latest/meta-data/' });
  const record = { name } as Record<string, unknown>;
  let expect: boolean | 'either';
  switch (kind) {
    case 'vendorAObject':
      record.vendorAObject = s3();
      expect = ep.trusted(Boolean(insecure));
      break;
    case 'vendorB':
      record.vendorB = blob();
      expect = ep.trusted(false);
      break;
    case 'vendorCObject':
      record.vendorCObject = gcs();
      expect = true;
      break;
    case 'http':
      record.http = http();
      expect = false;
      break;
    case 'raw':
      record.raw = { data: rng.pick(['x', BIG.slice(0, 10_000)]) };
      expect = false;
      break;
    default: {
      // Two locations: the one the downloader reads first (GCS, then blob, then S3) decides.
      const pair = rng.pick([
        ['vendorAObject', 'http'],
        ['vendorAObject', 'vendorB'],
        ['vendorAObject', 'vendorCObject'],
        ['vendorB', 'raw'],
      ] as const);
      for (const f of pair)
        record[f] =
          f === 'vendorAObject' ? s3() : f === 'vendorB' ? blob() : f === 'vendorCObject' ? gcs() : f === 'http' ? http() : { data: 'x' };
      expect = pair.includes('vendorCObject' as never)
        ? true
        : pair.includes('vendorB' as never)
          ? ep.trusted(false)
          : ep.trusted(Boolean(insecure));
    }
  }
  const label = `record #${i}: ${kind} ${ep.label}${insecure === undefined ? '' : ` insecure ${JSON.stringify(insecure)}`} name ${clip(JSON.stringify(name), 30)}`;
  return { record: record as unknown as Artifact, expect, label: clip(label, 300) };
}

/** In process: the trust check, then the steps-output check, for one hostile record. */
function checkRecordInProcess(h: HostileRecord, tally: Tally): void {
  const t = tally.of(ARTIFACTS_TARGET);
  t.tried++;
  const trusted = new Set([TRUSTED_ORIGIN]);
  try {
    artifactOrigin(h.record);
    for (const f of ['vendorAObject', 'vendorB'] as const) {
      const e = (h.record[f] as { endpoint?: unknown } | undefined)?.endpoint;
      if (typeof e === 'string') endpointOrigin(e, true);
    }
  } catch (err) {
    tally.fail(ARTIFACTS_TARGET, `${h.label}: artifactOrigin/endpointOrigin threw ${clip(errorMessage(err), 160)}`);
  }
  let passed = false;
  try {
    checkTrusted(h.record, trusted, 'workflow fuzz/fz');
    passed = true;
  } catch (err) {
    if (!(err instanceof OperationRefused) || err.reason !== 'forbidden')
      tally.fail(
        ARTIFACTS_TARGET,
        `${h.label}: checkTrusted threw ${clip(errorMessage(err), 160)} (only OperationRefused 'forbidden' may be thrown)`,
      );
    else if (!err.message.includes(`artifact "${h.record.name}"`))
      tally.fail(ARTIFACTS_TARGET, `${h.label}: refused without naming the artifact: ${clip(err.message, 160)}`);
  }
  if (passed) t.accepted++;
  else t.rejected++;
  if (passed && h.expect === false)
    tally.fail(
      ARTIFACTS_TARGET,
      `${h.label}: the trust check passed it (origin ${String(artifactOrigin(h.record))}, trusted only ${TRUSTED_ORIGIN})`,
    );
  if (!passed && h.expect === true) tally.fail(ARTIFACTS_TARGET, `${h.label}: the trust check refused a record of the trusted store`);

  // A steps output that passes the record on by a literal `from`: refused; only a produced one passes.
  const values = valueSource({ 'steps.a.outputs.artifacts.out': artifactVariable(REAL) });
  const produced = (a: Artifact) => locationKey(a) === locationKey(REAL);
  try {
    const got = collectOutputArtifacts(
      [{ name: 'leak', from: JSON.stringify(h.record) }],
      undefined,
      values,
      'spec.templates[main]',
      produced,
    );
    if (got.ok) tally.fail(ARTIFACTS_TARGET, `${h.label}: a literal record in outputs.artifacts[leak].from was taken as an output`);
    else if (!got.error.includes('outputs.artifacts[leak]'))
      tally.fail(ARTIFACTS_TARGET, `${h.label}: refused as an output without naming outputs.artifacts[leak]: ${clip(got.error, 160)}`);
  } catch (err) {
    tally.fail(ARTIFACTS_TARGET, `${h.label}: collectOutputArtifacts threw ${clip(errorMessage(err), 160)}`);
  }
}

/** The record a step produced still passes as an output (once per run: the check is not vacuous). */
function checkRealOutput(tally: Tally): void {
  const values = valueSource({ 'steps.a.outputs.artifacts.out': artifactVariable(REAL) });
  const got = collectOutputArtifacts(
    [{ name: 'passed', from: '{{steps.a.outputs.artifacts.out}}' }],
    undefined,
    values,
    'spec.templates[main]',
    (a) => locationKey(a) === locationKey(REAL),
  );
  if (!got.ok) tally.fail(ARTIFACTS_TARGET, `the artifact a step produced was refused as an output: ${got.error}`);
  try {
    checkTrusted(REAL, new Set([TRUSTED_ORIGIN]), 'workflow fuzz/fz');
  } catch (err) {
    tally.fail(ARTIFACTS_TARGET, `the artifact a step produced in the trusted store was refused for download: ${errorMessage(err)}`);
  }
}

/**
 * Artifact locations: `per` hostile records through the trust check and the steps-output check
 * in process, then a few workflows passing one on as an output through the system.
 */
export async function fuzzArtifactLocations(
  rng: Prng,
  t: ClusterFuzzTarget | undefined,
  tally: Tally,
  per: number,
  say: (line: string) => void = () => {},
): Promise<void> {
  checkRealOutput(tally);
  let passed = 0;
  for (let i = 0; i < per; i++) {
    const h = hostileRecord(rng, i);
    const before = tally.of(ARTIFACTS_TARGET).accepted;
    checkRecordInProcess(h, tally);
    passed += tally.of(ARTIFACTS_TARGET).accepted - before;
  }
  say(`  artifact locations: ${per} records in process, ${passed} passed the trust check (trusted store or GCS)`);
  if (!t) return;

  const n = throughSystem(per);
  const entry = tally.of(ARTIFACTS_TARGET);
  const stored: { name: string; label: string; record: Artifact }[] = [];
  for (let i = 0; i < n; i++) {
    const h = hostileRecord(rng, per + i);
    const name = `fz-artifact-${i}`;
    const wf = {
      apiVersion: 'plugflow.io/v1alpha1',
      kind: 'Workflow',
      metadata: { name },
      spec: {
        entrypoint: 'main',
        templates: [
          {
            name: 'main',
            steps: [[{ name: 'a', template: 'leaf' }]],
            outputs: { artifacts: [{ name: 'leak', from: JSON.stringify(h.record) }] },
          },
          { name: 'leaf', suspend: { duration: '0' } },
        ],
      },
    };
    entry.tried++;
    try {
      await t.client.create(WORKFLOWS, t.namespace, wf);
      entry.rejected++; // stored, to be refused by the controller (checked below)
      stored.push({ name, label: h.label, record: h.record });
    } catch (err) {
      if (err instanceof ApiError && err.code >= 400 && err.code < 500 && namesField(err.message)) entry.rejected++;
      else
        tally.fail(
          ARTIFACTS_TARGET,
          `${name} (${h.label}): the API server refused it without naming a field: ${clip(errorMessage(err), 200)}`,
        );
    }
  }
  const final = await awaitFinal(
    t,
    stored.map((s) => s.name),
  );
  for (const s of stored) {
    const w = final.get(s.name);
    if (!w) {
      tally.fail(ARTIFACTS_TARGET, `${s.name} (${s.label}): no final phase within ${FINISH_MS / 1000} s`);
      continue;
    }
    const nodes = Object.values(w.status?.nodes ?? {});
    if (w.status?.phase !== 'Error' || !nodes.some((node) => node.message?.includes(PHRASE)))
      tally.fail(
        ARTIFACTS_TARGET,
        `${s.name} (${s.label}): ended ${w.status?.phase} (${clip(w.status?.message ?? '', 160)}), not Error with a node message "${PHRASE}"`,
      );
    const carrying = nodes.filter((node) => node.outputs?.artifacts?.length);
    if (carrying.length)
      tally.fail(
        ARTIFACTS_TARGET,
        `${s.name} (${s.label}): node(s) ${carrying.map((node) => node.displayName ?? node.name).join(', ')} record output artifacts`,
      );
  }
  say(
    `  artifact locations: ${stored.length} workflows through the system (${[...final.values()].map((w) => w.status?.phase).join(', ')})`,
  );
  await controllerAlive(t, tally, ARTIFACTS_TARGET, 'after workflows passing hostile locations on');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const tally = new Tally();
  const per = Number(process.argv[2] ?? 300);
  const rng = new Prng(Number(process.argv[3] ?? 7));
  await fuzzCronSchedules(rng.fork('cron-cost'), undefined, tally, per, console.log);
  await fuzzMetricLabels(rng.fork('metric-labels'), undefined, tally, per, console.log);
  await fuzzArtifactLocations(rng.fork('artifact-locations'), undefined, tally, per, console.log);
  for (const t of tally.all()) {
    console.log(`${t.target}: ${t.tried} tried, ${t.accepted} accepted, ${t.rejected} rejected, ${t.failures.length} failures`);
    for (const f of t.failures) console.log(`  FAIL ${f}`);
  }
  process.exitCode = tally.failures() ? 1 : 0;
}
