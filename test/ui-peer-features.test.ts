/**
 * What the peer's UI has and ours lacked, each in a real browser (headless Chromium) against the
 * parts `plugflow dev` runs (the set-up of ui-browser.test.ts), plus a MinIO as the namespace's
 * artifact repository and a small HTTP server for an http input:
 *
 * 1. a workflow summary: parameters, labels, annotations, and who submitted it (recorded by the
 *    server as the caller's user, never what the client wrote);
 * 2. the logs of all of a workflow's pods in one view, each line prefixed with its node, filtered;
 * 3. input artifacts in the node panel: Download only from an artifact repository, the others
 *    listed with the reason (http, raw, a store the author named);
 * 4. "Retry from here": that node and what follows run again, what ran before keeps its results;
 * 5. Resubmit with changed parameters;
 * 6. finding nodes in the graph (Enter: next match; a match in a collapsed group is expanded);
 * 7. editing a WorkflowTemplate and a CronWorkflow as YAML (a 409 says "changed meanwhile";
 *    a refused spec shows the server's message naming the field);
 * 8. batch actions on selected rows of the list, one result line per workflow;
 * 9. backfilling a CronWorkflow over a past range (beyond the peer), its progress shown until complete.
 *
 * PLUGFLOW_UI_SCREENSHOTS=<dir> saves a screenshot of each (docs/ui/ holds the committed ones).
 */
import { CreateBucketCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Dialog, Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GROUP, PLURAL, VERSION } from '../src/api/index.js';
import { storeClient } from '../src/artifacts/s3.js';
import { startObjectStore, type ObjectStore } from '../src/devenv/object-store.js';
import { launchBrowser } from './support/browser.js';
import { cluster } from './support/cluster.js';
import { nodeNamed, startE2eStack, type E2eStack } from './support/e2e.js';
import { call, createObject, grantRole, rule } from './support/server.js';
import { API, chain, CREATOR, echo, inputsWorkflow, params, sleeper, workflow } from './support/peer-fixtures.js';

// Functions run in the page see the browser's globals; this file is compiled without the DOM library.
interface El {
  textContent: string | null;
  value: string;
  getBoundingClientRect(): { left: number; right: number; top: number; bottom: number };
  closest(s: string): El | null;
  dispatchEvent(e: unknown): boolean;
}
declare const document: { querySelectorAll(s: string): ArrayLike<El> };
declare const location: { hash: string };
declare const Event: new (type: string, init: { bubbles: boolean }) => unknown;

const shots = process.env.PLUGFLOW_UI_SCREENSHOTS;

describe("the peer's UI features", () => {
  let stack: E2eStack;
  let browser: Browser;
  let page: Page;
  let ns: string;
  let store: ObjectStore;
  let http: Server;

  const url = (view: string) => `${stack.server!.url}/${view}`;
  const shot = async (name: string) => {
    if (!shots) return;
    mkdirSync(shots, { recursive: true });
    await page.screenshot({ path: join(shots, `${name}.png`) });
  };
  const text = (selector: string) => page.$eval(selector, (e) => e.textContent ?? '');
  const texts = (selector: string) => page.$$eval(selector, (es) => es.map((e) => e.textContent ?? ''));
  const waitText = (selector: string, pattern: RegExp, timeout = 60_000) =>
    page.waitForFunction(
      (s: string, p: string) => Array.from(document.querySelectorAll(s)).some((e) => new RegExp(p).test(e.textContent ?? '')),
      { timeout, polling: 100 },
      selector,
      pattern.source,
    );
  /** Sets an input's or textarea's value as typing would (an `input` event for preact). */
  const setValue = (selector: string, value: string) =>
    page.$eval(
      selector,
      (e, v) => {
        (e as unknown as El).value = v;
        (e as unknown as El).dispatchEvent(new Event('input', { bubbles: true }));
      },
      value,
    );
  /** Answers the next confirmation; resolves with its question. */
  const nextConfirm = () => new Promise<string>((resolve) => page.once('dialog', (d: Dialog) => (resolve(d.message()), void d.accept())));
  const login = async (token: string) => {
    await page.goto(url('#/login'));
    await page.waitForSelector('#token');
    await setValue('#token', token);
    await page.click('form button[type=submit]');
    await page.waitForSelector('header .user');
    const input = 'input[aria-label^="Namespace"]';
    await page.$eval(input, (e) => ((e as unknown as El).value = ''));
    await page.type(input, ns);
    await page.keyboard.press('Tab');
  };
  const started = async (name: string, step: string) => nodeNamed(await stack.getWorkflow(name), step).startedAt;

  beforeAll(async () => {
    store = await startObjectStore();
    const s3 = storeClient({ bucket: 'artifacts', key: '', endpoint: store.endpoint, insecure: true }, store);
    await s3.send(new CreateBucketCommand({ Bucket: 'artifacts' }));
    await s3.send(new PutObjectCommand({ Bucket: 'artifacts', Key: 'own/data.txt', Body: 'named by the author\n' }));
    http = createServer((_req, res) => res.end('from http\n'));
    await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
    stack = await startE2eStack({ prefix: 'ui-peer', plugins: false });
    ns = stack.namespace;
    const creds = { accessKeySecret: { name: 'store', key: 'a' }, secretKeySecret: { name: 'store', key: 's' } };
    await stack.core.createNamespacedSecret({
      namespace: ns,
      body: { metadata: { name: 'store' }, stringData: { a: store.accessKey, s: store.secretKey } },
    });
    await stack.core.createNamespacedConfigMap({
      namespace: ns,
      body: {
        metadata: { name: 'artifact-repositories', annotations: { 'workflows.plugflow.io/default-artifact-repository': 'minio' } },
        data: { minio: JSON.stringify({ vendorAObject: { bucket: 'artifacts', endpoint: store.endpoint, insecure: true, ...creds } }) },
      },
    });
    const port = (http.address() as { port: number }).port;
    await stack.submit(inputsWorkflow(`http://127.0.0.1:${port}/data.txt`, `localhost:${store.endpoint.split(':')[1]}`, creds));
    await stack.submit(params);
    await stack.submit(chain);
    browser = await launchBrowser();
    page = await browser.newPage();
    await login(cluster().adminToken);
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
    await store?.stop();
    http?.close();
  });

  it('1. shows the summary: parameters, labels, annotations, and the user who submitted it', async () => {
    await stack.waitForCompletion('params', 90_000);
    expect((await stack.getWorkflow('params')).metadata.annotations?.[CREATOR]).toBe('admin');
    await page.goto(url(`#/workflows/${ns}/params?tab=summary`));
    await waitText('.summary .creator', /^admin$/);
    expect(await texts('.summary-parameters li')).toEqual(['who = Ada', 'mood = calm']);
    expect(await texts('.summary-labels li')).toContain('team: data');
    expect(await texts('.summary-annotations li')).toEqual(['note: hello', `${CREATOR}: admin`]);
    await shot('workflow-summary');
  });

  it("2. shows every pod's log in one view, each line prefixed with its node, and filters it", async () => {
    await page.goto(url(`#/workflows/${ns}/params?tab=logs`));
    await waitText('pre.wf-log', /crunch \| result 42/);
    expect(await text('pre.wf-log')).toContain('fetch | fetched 3 files for Ada');
    expect(await text('.wf-logs .bound')).toMatch(/At most 4 logs are read at once/);
    await page.type('input.log-filter', 'RESULT');
    await waitText('.wf-logs .count', /^1 matching of 3 lines$/);
    expect(await texts('pre.wf-log .line')).toEqual(['crunch | result 42\n']);
    expect(await texts('pre.wf-log mark')).toEqual(['result']);
    await shot('workflow-logs');
    await page.click('.wf-logs input[type=checkbox]'); // all lines, the matches marked
    await page.waitForFunction(() => document.querySelectorAll('pre.wf-log .line').length === 3);
  });

  it('3. lists input artifacts: Download from the artifact repository only, the others with the reason', async () => {
    const wf = await stack.waitForCompletion('inputs', 120_000);
    expect(wf.status?.phase, await stack.describe('inputs')).toBe('Succeeded');
    const use = nodeNamed(wf, 'use');
    await page.goto(url(`#/workflows/${ns}/inputs?node=${encodeURIComponent(use.id)}`));
    await page.waitForSelector('li[data-artifact=msg] button[data-download="inputs/msg"]');
    const reason = (a: string) => text(`li[data-artifact=${a}] .not-downloadable`);
    expect(await reason('web')).toMatch(
      /the step fetches it itself \(http http:\/\/127\.0\.0\.1:\d+\/data\.txt\).*downloads only from artifact repositories/,
    );
    expect(await reason('note')).toMatch(/its data is written in the workflow itself/);
    expect(await reason('own')).toMatch(/stored at http:\/\/localhost:\d+, which is not an artifact repository/);
    for (const a of ['web', 'note', 'own']) expect(await page.$(`li[data-artifact=${a}] button`)).toBeNull();
    // The server refuses those itself (403), whoever asks.
    for (const a of ['note', 'own']) {
      const res = await call('GET', url(`artifact-files/${ns}/workflows/inputs/${use.id}/inputs/${a}`), { token: cluster().adminToken });
      expect(res.status, a).toBe(403);
    }
    const dir = mkdtempSync(join(tmpdir(), 'ui-peer-download-'));
    const cdp = await browser.target().createCDPSession();
    await cdp.send('Browser.setDownloadBehavior', { behavior: 'allow', downloadPath: dir });
    await page.click('li[data-artifact=msg] button');
    const saved = () => readdirSync(dir).filter((f) => !f.endsWith('.crdownload'));
    await expect.poll(saved, { timeout: 20_000 }).toHaveLength(1);
    expect(readFileSync(join(dir, saved()[0]!), 'utf8')).toBe('hello\n');
    await shot('node-input-artifacts');
  });

  it('4. retries from a chosen node: it and what follows run again, what ran before keeps its result', async () => {
    const wf = await stack.waitForCompletion('chain', 120_000);
    const before = {
      prepare: await started('chain', 'prepare'),
      build: await started('chain', 'build'),
      check: await started('chain', 'check'),
    };
    await page.goto(url(`#/workflows/${ns}/chain?node=${encodeURIComponent(nodeNamed(wf, 'build').id)}`));
    await page.waitForSelector('button[data-action=retry-node]:not([disabled])');
    await shot('retry-from-node');
    const asked = nextConfirm();
    await page.click('button[data-action=retry-node]');
    expect(await asked).toMatch(/Retry from build\? It and every step after it run again; the steps before it keep their results/);
    await waitText('.retry-node .done', /Retry from build: done/);
    await expect.poll(() => started('chain', 'check'), { timeout: 60_000 }).not.toBe(before.check);
    expect(await started('chain', 'build')).not.toBe(before.build);
    const again = await stack.waitForCompletion('chain', 120_000);
    expect(nodeNamed(again, 'prepare').startedAt).toBe(before.prepare);
    expect(nodeNamed(again, 'check').phase).toBe('Failed');
  });

  it('5. resubmits with a changed parameter, the others as they were', async () => {
    await page.goto(url(`#/workflows/${ns}/params`));
    await page.waitForSelector('button[data-action=resubmit]:not([disabled])');
    await page.click('button[data-action=resubmit]');
    await page.waitForSelector('form.resubmit-form input[name=who]');
    expect(await page.$eval('form.resubmit-form input[name=who]', (e) => (e as unknown as El).value)).toBe('Ada');
    await setValue('form.resubmit-form input[name=who]', 'Grace');
    await waitText('form.resubmit-form .cli code', /plugflow resubmit params -n \S+ -p 'who=Grace'$/);
    await shot('resubmit-form');
    await page.click('form.resubmit-form button[type=submit]');
    await page.waitForFunction(() => /#\/workflows\/[^/]+\/params-/.test(location.hash), { timeout: 30_000 });
    const name = decodeURIComponent((await page.evaluate(() => location.hash)).split('/')[3]!.split('?')[0]!);
    const resubmitted = await stack.getWorkflow(name);
    expect(resubmitted.spec.arguments?.parameters).toEqual([
      { name: 'who', value: 'Grace' },
      { name: 'mood', value: 'calm' },
    ]);
    expect(resubmitted.metadata.annotations?.[CREATOR]).toBe('admin');
  });

  it('6. finds nodes in the graph: marks them, goes to the first, Enter to the next, opening a collapsed group', async () => {
    await page.goto(url(`#/workflows/${ns}/params`));
    await page.waitForSelector('g.node.kind-collapsed');
    await page.type('input.node-search', 'item(1');
    await waitText('.graph .search-count', /^1 of 5$/);
    // The match was in the collapsed loop: the group opened to show it.
    await page.waitForSelector('g.node.match.current[aria-label^="item(1"]');
    expect(await page.$$eval('g.node.match', (g) => g.length)).toBe(5);
    const first = await page.$eval('g.node.current', (g) => g.getAttribute('aria-label'));
    await page.keyboard.press('Enter');
    await waitText('.graph .search-count', /^2 of 5$/);
    expect(await page.$eval('g.node.current', (g) => g.getAttribute('aria-label'))).toMatch(/^item\(1/);
    expect(await page.$eval('g.node.current', (g) => g.getAttribute('aria-label'))).not.toBe(first);
    // The view follows the current match; the workflow may still be re-laid out meanwhile, so this waits for it.
    await page.waitForFunction(
      () => {
        const e = document.querySelectorAll('g.node.current')[0];
        if (!e) return false;
        const r = e.getBoundingClientRect();
        const v = e.closest('.graph-scroll')!.getBoundingClientRect();
        return r.right > v.left && r.left < v.right && r.bottom > v.top && r.top < v.bottom;
      },
      { timeout: 10_000 },
    );
    await shot('graph-search');
    await setValue('input.node-search', 'crunch');
    await waitText('.graph .search-count', /^1 of 1$/);
  });

  it('7. edits a WorkflowTemplate and a CronWorkflow as YAML: saved, refused naming the field, or changed meanwhile', async () => {
    await createObject(ns, PLURAL.workflowTemplate, {
      apiVersion: API,
      kind: 'WorkflowTemplate',
      metadata: { name: 'greet' },
      spec: { entrypoint: 'main', arguments: { parameters: [{ name: 'who', value: 'world' }] }, templates: [echo('main', 'echo hi')] },
    });
    await createObject(ns, PLURAL.cronWorkflow, {
      apiVersion: API,
      kind: 'CronWorkflow',
      metadata: { name: 'nightly' },
      spec: { schedule: '0 3 * * *', workflowSpec: { entrypoint: 'main', templates: [echo('main', 'true')] } },
    });
    const editor = 'form.yaml-editor textarea';
    const edit = async (from: string, to: string) =>
      setValue(editor, (await page.$eval(editor, (e) => (e as unknown as El).value)).replace(from, to));
    await page.goto(url(`#/templates/${ns}/greet`));
    await page.waitForSelector('details.edit-yaml summary');
    await page.click('details.edit-yaml summary');
    await edit('value: world', 'value: planet');
    await page.click('button[data-action=save]');
    await waitText('form.yaml-editor .done', /Saved WorkflowTemplate greet/);
    const get = (plural: string, name: string) =>
      stack.objects.getNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: ns, plural, name }) as Promise<any>;
    expect((await get(PLURAL.workflowTemplate, 'greet')).spec.arguments.parameters).toEqual([{ name: 'who', value: 'planet' }]);
    await edit('entrypoint: main', 'entrypoint: [main]');
    await page.click('button[data-action=save]');
    await waitText('form.yaml-editor .error', /^Not saved: .*entrypoint/);
    // Someone else changes it meanwhile: the save is refused, and Reload gets their version.
    const current = await get(PLURAL.workflowTemplate, 'greet');
    current.metadata.labels = { changed: 'elsewhere' };
    await stack.objects.replaceNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace: ns,
      plural: PLURAL.workflowTemplate,
      name: 'greet',
      body: current,
    });
    await edit('entrypoint: [main]', 'entrypoint: main');
    await page.click('button[data-action=save]');
    await waitText('form.yaml-editor .error', /It was changed meanwhile .*reload/);
    await shot('template-editor');
    await page.click('button[data-action=reload]');
    await page.waitForFunction((s: string) => (document.querySelectorAll(s)[0]?.value ?? '').includes('changed: elsewhere'), {}, editor);

    await page.goto(url('#/cron'));
    await page.waitForSelector('button[data-action=cron-edit]');
    await page.click('button[data-action=cron-edit]');
    await edit('schedule: 0 3 * * *', 'schedule: not a schedule');
    await page.click('button[data-action=save]');
    await waitText('form.yaml-editor .error', /^Not saved: CronWorkflow \S+ is invalid: .*schedule/);
    await shot('cron-editor');
    await edit('schedule: not a schedule', 'schedule: 0 4 * * *');
    await page.click('button[data-action=save]');
    await waitText('form.yaml-editor .done', /Saved CronWorkflow nightly/);
    expect((await get(PLURAL.cronWorkflow, 'nightly')).spec.schedule).toBe('0 4 * * *');
  });

  it('9. backfills a CronWorkflow over three past days, 3 at a time, and shows its progress until complete', async () => {
    await createObject(ns, PLURAL.cronWorkflow, {
      apiVersion: API,
      kind: 'CronWorkflow',
      metadata: { name: 'backfilled' },
      spec: { schedule: '0 4 * * *', workflowSpec: { entrypoint: 'main', templates: [echo('main', 'true')] } },
    });
    // Three whole days in the browser's zone hold three times of a daily schedule.
    const row = 'tr[data-cron=backfilled]';
    const day = (offset: number) => {
      const d = new Date();
      d.setDate(d.getDate() + offset);
      return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
    };
    // Test 7 may have left the page on #/cron: load it afresh so the list holds the new CronWorkflow.
    await page.goto(url('#/cron'));
    await page.reload();
    await page.waitForSelector(`${row} button[data-action=cron-backfill]`);
    await page.click(`${row} button[data-action=cron-backfill]`);
    const form = `${row} form.backfill-form`;
    await page.waitForSelector(form);
    await setValue(`${form} input[name=from]`, `${day(-3)}T00:00:00`);
    await setValue(`${form} input[name=to]`, `${day(-1)}T23:59:59`);
    await setValue(`${form} input[name=parallel]`, '3');
    await page.click(`${form} button[type=submit]`);
    await waitText(`${form} .answer`, /^backfill bf-\d+-\d+: 3 runs start, 3 at a time$/);
    await waitText(`${row} ul.backfills li`, /Complete: 3\/3 started, 0 running/, 120_000);
    await shot('cron-backfill');
    // The same range again starts nothing, and says so.
    await page.click(`${form} button[type=submit]`);
    await waitText(`${form} .answer`, /was asked for before: nothing new starts/);
  }, 180_000);

  it('8. acts on the selected rows of the list: each checked as the single action, one result line per workflow', async () => {
    await stack.submit(sleeper('batch-run-1'));
    await stack.submit(sleeper('batch-run-2'));
    await stack.submit(workflow('batch-done', { entrypoint: 'main', templates: [echo('main', 'true')] }));
    await stack.waitForCompletion('batch-done', 60_000);
    // No template of that name: the controller fails it without a step, so a retry has nothing to run.
    await stack.objects.createNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace: ns,
      plural: PLURAL.workflow,
      body: workflow('batch-nothing', { workflowTemplateRef: { name: 'missing' } }),
    });
    await stack.waitForCompletion('batch-nothing', 60_000);
    await page.goto(url('#/workflows?name=batch-'));
    await page.waitForFunction(() => document.querySelectorAll('.rows a.row').length === 4, { timeout: 30_000 });
    await page.waitForSelector(`a.row[href="#/workflows/${ns}/batch-run-2"] .phase-Running`, { timeout: 60_000 });
    await page.click('input.pick-all');
    await waitText('.batch .count', /^4 selected:$/);
    const line = (name: string) => text(`.batch-results li[data-workflow="${ns}/${name}"]`);
    const asked = nextConfirm();
    await page.click('button[data-batch=stop]');
    expect(await asked).toMatch(/^Stop 2 workflows\?/);
    await waitText(`.batch-results li[data-workflow="${ns}/batch-run-2"]`, /: ok$/);
    expect(await line('batch-run-1')).toBe(`Stop ${ns}/batch-run-1: ok`);
    expect(await line('batch-done')).toBe(`Stop ${ns}/batch-done: not sent: it has finished`);
    await stack.waitForCompletion('batch-run-1', 45_000);
    await stack.waitForCompletion('batch-run-2', 45_000);
    await page.waitForSelector(`a.row[href="#/workflows/${ns}/batch-run-2"] .phase-Failed`);
    await page.click('button[data-batch=retry]');
    // One at a time: every line has its answer once none is pending.
    await page.waitForFunction(() => document.querySelectorAll('.batch-results li.pending').length === 0, { timeout: 90_000 });
    expect(await line('batch-nothing')).toMatch(/nothing to retry/);
    expect(await line('batch-run-1')).toBe(`Retry ${ns}/batch-run-1: ok`);
    expect(await line('batch-done')).toMatch(/not sent: only a Failed or Error workflow can be retried$/);
    await shot('batch-actions');
    const deleting = nextConfirm();
    await page.click('button[data-batch=delete]');
    expect(await deleting).toMatch(/^Delete 4 workflows and their pods\?$/);
    await page.waitForFunction(() => document.querySelectorAll('.batch-results li.ok').length === 4, { timeout: 30_000 });
    await page.waitForFunction(() => document.querySelectorAll('.rows a.row').length === 0, { timeout: 30_000 });

    // A token that may only look: Delete is refused before anything is sent, with the reason.
    await grantRole(ns, 'dave', 'ui-peer-viewer', [rule('workflows', 'get', 'list', 'watch')]);
    await login(cluster().userTokens.dave!);
    await page.goto(url('#/workflows?name=chain'));
    await page.waitForSelector('.rows a.row');
    await page.waitForSelector('input.pick-all');
    await page.click('input.pick-all');
    await page.waitForSelector('button[data-batch=delete][disabled]');
    expect(await page.$eval('button[data-batch=delete]', (b) => b.getAttribute('title'))).toMatch(
      /may not delete workflows\b.*so it may not delete workflows/,
    );
    expect(await text('.batch details.why')).toMatch(/Retry: forbidden: .*so it may not retry workflows/);
    // And the node panel's Retry from here the same way.
    const chainWf = await stack.getWorkflow('chain');
    await page.goto(url(`#/workflows/${ns}/chain?node=${encodeURIComponent(nodeNamed(chainWf, 'build').id)}`));
    await page.waitForSelector('button[data-action=retry-node][disabled]');
    expect(await text('.retry-node .refusal')).toMatch(/may not patch workflows\b.*so it may not retry workflows/);
  });
});
