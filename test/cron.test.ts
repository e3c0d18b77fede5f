/**
 * CronWorkflows against the real API server with RBAC on, the local pod runner as the kubelet:
 *
 * - created through the REST server with the caller's token (a broken schedule is refused
 *   naming the field), a CronWorkflow on an every-second schedule starts one workflow per
 *   scheduled time, named `<cron>-<unix seconds>`, keeps the history limits, counts its runs,
 *   and starts nothing once suspended through REST (`plugflow cron suspend` does the same call);
 * - the controller is stopped for a few seconds and started again: of the times it missed, only
 *   the latest runs (once), and no scheduled time ever gets two workflows; with catchUp All,
 *   every missed time runs, once;
 * - `plugflow cron backfill` (through REST, with the caller's token) runs each scheduled time of
 *   a past range once, `parallel` at a time, with two controllers acting at once; asking again
 *   for the range starts nothing; a range of too many times is refused, naming the bound.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LABEL_BACKFILL, LABEL_CRON_WORKFLOW, type CronWorkflow, type Workflow } from '../src/api/index.js';
import { runCronBackfill } from '../src/cli/cron.js';
import { startController, type RunningController } from '../src/controller/controller.js';
import type { KubeClient } from '../src/kube/client.js';
import { CRON_WORKFLOWS, WORKFLOWS } from '../src/kube/resource.js';
import { captureLogger, eventually, startRunnerBed, type RunnerBed } from './controller-harness.js';
import { adminKubeConfig, cluster } from './support/cluster.js';
import { call, grantRole, rule, startTestServer, type TestServer } from './support/server.js';

let ns: string;
let client: KubeClient;
let bed: RunnerBed;
let server: TestServer;
let controller: RunningController | undefined;
let alice: string;

const runsOf = async (cron: string) =>
  (await client.list<Workflow>(WORKFLOWS, { namespace: ns, labelSelector: `${LABEL_CRON_WORKFLOW}=${cron}` })).items;
const scheduledSeconds = (wf: Workflow) => Number(wf.metadata.name!.split('-').pop());

function cronBody(name: string, spec: Partial<CronWorkflow['spec']> = {}): CronWorkflow {
  return {
    apiVersion: 'plugflow.io/v1alpha1',
    kind: 'CronWorkflow',
    metadata: { name },
    spec: {
      schedule: '* * * * * *',
      workflowSpec: { entrypoint: 'main', templates: [{ name: 'main', container: { image: 'alpine:3', command: ['true'] } }] },
      ...spec,
    },
  };
}

beforeAll(async () => {
  bed = await startRunnerBed('cron');
  ({ ns, client } = bed);
  alice = cluster().userTokens.alice;
  await grantRole(ns, 'alice', 'cron-editor', [rule('cronworkflows', 'create', 'get', 'list', 'patch', 'delete')]);
  server = await startTestServer({ namespace: ns });
  controller = await startController({ kubeConfig: adminKubeConfig(), namespace: ns, metricsPort: 0, log: captureLogger().log });
}, 180_000);

afterAll(async () => {
  await controller?.stop();
  await server?.close();
  await bed?.stop();
});

describe('CronWorkflows', () => {
  const url = (name = '') => `${server.url}/api/v1/cron-workflows/${ns}${name}`;

  it('REST refuses a broken schedule naming the field, and a token without rights gets 403', async () => {
    const bad = await call('POST', url(), { token: alice, body: { cronWorkflow: cronBody('bad', { schedule: '61 * * * *' }) } });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/^CronWorkflow .*\/bad is invalid: spec\.schedule: "61 \* \* \* \*" is not a cron schedule/);
    const refused = await call('POST', url(), {
      token: alice,
      body: {
        cronWorkflow: cronBody('refused', {
          workflowSpec: { entrypoint: 'main', templates: [{ name: 'main', priority: 5, container: { image: 'a', command: ['true'] } }] },
        }),
      },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toContain('spec.workflowSpec: spec.templates[main].priority is not supported yet');
    const bob = await call('POST', url(), { token: cluster().userTokens.bob, body: { cronWorkflow: cronBody('bobs') } });
    expect(bob.status).toBe(403);
  });

  it('a CronWorkflow with 10,000 schedules (the 158 KB attack) is refused by REST and by the API server, naming the limit', async () => {
    const schedules = Array.from({ length: 10_000 }, (_, i) => `${i % 60} ${i % 24} * * *`);
    const flood = cronBody('flood', { schedule: undefined, schedules });
    const rest = await call('POST', url(), { token: alice, body: { cronWorkflow: flood } });
    expect(rest.status).toBe(400);
    expect(rest.body.message).toMatch(
      /spec\.schedules: at most 20 schedules \(with spec\.schedule\) are allowed, this CronWorkflow has 10000/,
    );
    // kubectl apply goes to the API server directly: the CRD schema bounds the list there.
    const direct = await client.create(CRON_WORKFLOWS, ns, flood).then(
      () => 'stored',
      (err: Error) => err.message,
    );
    expect(direct).toMatch(/spec\.schedules: Too many: 10000: must have at most 20 items/);
    const long = await client.create(CRON_WORKFLOWS, ns, cronBody('long', { schedule: `* * * * * ${' '.repeat(300)}` })).then(
      () => 'stored',
      (err: Error) => err.message,
    );
    expect(long).toMatch(/spec\.schedule: Too long: may not be (longer than|more than) 256/);
  });

  it('starts one workflow per second named by its scheduled time, keeps the history limit, counts, and stops on suspend', async () => {
    const created = await call('POST', url(), {
      token: alice,
      body: { cronWorkflow: cronBody('tick', { successfulJobsHistoryLimit: 2 }) },
    });
    expect(created.status).toBe(200);
    const counted = await eventually(
      async () => {
        const c = await client.get<CronWorkflow>(CRON_WORKFLOWS, ns, 'tick');
        return (c.status?.succeeded ?? 0) >= 4 ? c : undefined;
      },
      'four runs of tick succeeded',
      60_000,
    );
    expect(counted.status?.lastScheduledTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000Z$/);
    const suspended = await call('PUT', url('/tick/suspend'), { token: alice });
    expect(suspended.status).toBe(200);
    expect(suspended.body.spec.suspend).toBe(true);
    // History: at most 2 succeeded runs are kept (plus any still running when suspended).
    const runs = await eventually(
      async () => {
        const r = await runsOf('tick');
        return r.filter((w) => w.status?.phase === 'Succeeded').length <= 2 && r.every((w) => w.status?.phase === 'Succeeded')
          ? r
          : undefined;
      },
      'the history trimmed to 2',
      30_000,
    );
    for (const w of runs) {
      expect(w.metadata.name).toMatch(/^tick-\d{10}$/);
      expect(w.metadata.annotations?.['workflows.plugflow.io/scheduled-time']).toBe(new Date(scheduledSeconds(w) * 1000).toISOString());
      expect(w.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'CronWorkflow', name: 'tick' });
    }
    // Suspended: nothing new for two seconds.
    const before = (await client.get<CronWorkflow>(CRON_WORKFLOWS, ns, 'tick')).status?.lastScheduledTime;
    await new Promise((r) => setTimeout(r, 2_000));
    expect((await client.get<CronWorkflow>(CRON_WORKFLOWS, ns, 'tick')).status?.lastScheduledTime).toBe(before);
    const listed = await call('GET', url(), { token: alice });
    expect(listed.body.items.map((c: CronWorkflow) => c.metadata.name)).toContain('tick');
    expect((await call('DELETE', url('/tick'), { token: alice })).status).toBe(200);
  }, 120_000);

  it('after the controller was down, only the latest missed time runs, and no time runs twice', async () => {
    await client.create(CRON_WORKFLOWS, ns, cronBody('outage', { startingDeadlineSeconds: 30 }));
    await eventually(async () => ((await runsOf('outage')).length >= 2 ? true : undefined), 'two runs before the outage', 30_000);
    await controller!.stop();
    controller = undefined;
    const stoppedAt = Date.now();
    await new Promise((r) => setTimeout(r, 4_000));
    const downSince = Math.max(...(await runsOf('outage')).map(scheduledSeconds));
    controller = await startController({ kubeConfig: adminKubeConfig(), namespace: ns, metricsPort: 0, log: captureLogger().log });
    const restartedAt = Date.now();
    await eventually(
      async () => ((await runsOf('outage')).some((w) => scheduledSeconds(w) * 1000 > restartedAt) ? true : undefined),
      'a run after the restart',
      30_000,
    );
    await client.mergePatch(CRON_WORKFLOWS, ns, 'outage', { spec: { suspend: true } });
    const seconds = (await runsOf('outage')).map(scheduledSeconds).sort();
    expect(new Set(seconds).size).toBe(seconds.length);
    // Of the seconds between the last run before the outage and the restart, at most one (the latest missed) ran.
    const during = seconds.filter((s) => s > downSince && s * 1000 <= restartedAt);
    expect(during.length, `runs at ${seconds.join(', ')}; stopped ${stoppedAt}, restarted ${restartedAt}`).toBeLessThanOrEqual(1);
    expect(seconds.some((s) => s * 1000 > restartedAt)).toBe(true);
  }, 120_000);

  it('with catchUp All, every time missed while the controller was down runs, once', async () => {
    await client.create(
      CRON_WORKFLOWS,
      ns,
      cronBody('catchup', { catchUp: { policy: 'All', maxRuns: 30 }, successfulJobsHistoryLimit: 100 }),
    );
    await eventually(async () => ((await runsOf('catchup')).length >= 2 ? true : undefined), 'two runs before the outage', 30_000);
    await controller!.stop();
    controller = undefined;
    await new Promise((r) => setTimeout(r, 4_000));
    const downSince = Math.max(...(await runsOf('catchup')).map(scheduledSeconds));
    controller = await startController({ kubeConfig: adminKubeConfig(), namespace: ns, metricsPort: 0, log: captureLogger().log });
    const restartedAt = Math.floor(Date.now() / 1000);
    await eventually(
      async () => ((await runsOf('catchup')).some((w) => scheduledSeconds(w) > restartedAt + 1) ? true : undefined),
      'a run after the restart',
      30_000,
    );
    await client.mergePatch(CRON_WORKFLOWS, ns, 'catchup', { spec: { suspend: true } });
    const seconds = (await runsOf('catchup')).map(scheduledSeconds).sort();
    expect(new Set(seconds).size).toBe(seconds.length);
    // Every second from the last run before the outage to after the restart has its run.
    for (let s = downSince; s <= restartedAt; s++) expect(seconds, `runs at ${seconds.join(', ')}`).toContain(s);
  }, 120_000);

  it('plugflow cron backfill runs each time of a past range once, 2 at a time, with two controllers; again starts nothing', async () => {
    const hour = 3600_000;
    const top = Math.floor(Date.now() / hour) * hour;
    await client.create(CRON_WORKFLOWS, ns, cronBody('hourly', { schedule: '0 * * * *', successfulJobsHistoryLimit: 0 }));
    const second = await startController({ kubeConfig: adminKubeConfig(), namespace: ns, metricsPort: 0, log: captureLogger().log });
    try {
      const lines: string[] = [];
      const printer = { out: (l: string) => lines.push(l), err: (l: string) => lines.push(`ERR ${l}`) };
      const from = new Date(top - 5 * hour).toISOString();
      const to = new Date(top - hour).toISOString();
      const flags = {
        server: server.url,
        token: alice,
        insecureSkipTlsVerify: true,
        namespace: ns,
        from,
        to,
        parallel: '2',
        wait: true,
        pollMs: 300,
      };
      expect(await runCronBackfill('hourly', flags, printer), lines.join('\n')).toBe(0);
      expect(lines[0]).toContain('5 runs start, 2 at a time');
      expect(lines.at(-1)).toMatch(/Complete: 5\/5 started, 0 running/);
      const runs = (await runsOf('hourly')).filter((w) => w.metadata.labels?.[LABEL_BACKFILL]);
      expect(runs.map(scheduledSeconds).sort()).toEqual([5, 4, 3, 2, 1].map((h) => (top - h * hour) / 1000));
      for (const w of runs) {
        expect(w.status?.phase).toBe('Succeeded');
        expect(w.metadata.labels?.['workflows.plugflow.io/scheduled-time']).toMatch(/^\d{8}T\d{6}Z$/);
      }
      // The history limit (0) does not reach a backfill's runs: they are the user's.
      const status = (await client.get<CronWorkflow>(CRON_WORKFLOWS, ns, 'hourly')).status?.backfills?.[0];
      expect(status).toMatchObject({ phase: 'Complete', total: 5, started: 5 });

      const again = await call('POST', url('/hourly/backfill'), { token: alice, body: { from, to, parallel: 2 } });
      expect(again.status).toBe(200);
      expect(again.body).toMatchObject({ existing: true, runs: 0 });
      await new Promise((r) => setTimeout(r, 1_000));
      expect((await runsOf('hourly')).filter((w) => w.metadata.labels?.[LABEL_BACKFILL])).toHaveLength(5);

      const huge = await call('POST', url('/hourly/backfill'), {
        token: alice,
        body: { from: new Date(top - 2000 * hour).toISOString(), to },
      });
      expect(huge.status).toBe(400);
      expect(huge.body.message).toMatch(
        /backfill refused: .*more than 1000 scheduled times, the most one backfill may start; split the range/,
      );
      const bob = await call('POST', url('/hourly/backfill'), { token: cluster().userTokens.bob, body: { from, to } });
      expect(bob.status).toBe(403);
    } finally {
      await second.stop();
    }
  }, 180_000);
});
