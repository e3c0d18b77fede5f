/**
 * The web UI in a real browser (headless Chromium) against the same parts `plugflow dev` runs —
 * the real API server with RBAC on, the controller, the local pod runner, the REST server that
 * serves the UI: log in with a bad token and a good one, find a running workflow in the list and
 * watch it finish, open a failed step's log and retry it, submit from a template's form, test an
 * event against the bindings, and see an action disabled with its reason for a token that may
 * not do it.
 *
 * PLUGFLOW_UI_SCREENSHOTS=<dir> saves a screenshot of each main page there (docs/ui/ holds the
 * committed ones).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GROUP, PLURAL, VERSION, type Workflow } from '../src/api/index.js';
import { launchBrowser } from './support/browser.js';
import { cluster } from './support/cluster.js';
import { startE2eStack, type E2eStack } from './support/e2e.js';
import { call, createObject, eventually, grantRole, rule } from './support/server.js';

// Functions run in the page see the browser's globals; this file is compiled without the DOM library.
declare const window: { innerWidth: number };
declare const sessionStorage: { setItem(k: string, v: string): void };
declare const document: {
  documentElement: { scrollWidth: number };
  activeElement: { getAttribute(n: string): string | null; outerHTML: string } | null;
  querySelectorAll(s: string): ArrayLike<{ textContent: string | null }>;
};
declare const location: { hash: string };

const API = `${GROUP}/${VERSION}`;
const shots = process.env.PLUGFLOW_UI_SCREENSHOTS;

const slow: Workflow = {
  apiVersion: API,
  kind: 'Workflow',
  metadata: { name: 'slow' },
  spec: {
    entrypoint: 'main',
    templates: [
      {
        name: 'main',
        steps: [
          [{ name: 'prepare', template: 'sleep' }],
          [
            { name: 'left', template: 'sleep' },
            { name: 'right', template: 'sleep' },
          ],
        ],
      },
      { name: 'sleep', container: { image: 'alpine:3.20', command: ['sh', '-c', 'sleep 2; echo rested'] } },
    ],
  },
} as Workflow;

const broken: Workflow = {
  apiVersion: API,
  kind: 'Workflow',
  metadata: { name: 'broken' },
  spec: {
    entrypoint: 'main',
    templates: [
      {
        name: 'main',
        dag: {
          tasks: [
            { name: 'fetch', template: 'ok' },
            { name: 'crunch', template: 'boom', dependencies: ['fetch'] },
          ],
        },
      },
      { name: 'ok', container: { image: 'alpine:3.20', command: ['echo', 'fetched'] } },
      { name: 'boom', container: { image: 'alpine:3.20', command: ['sh', '-c', 'echo "crunching failed: boom"; exit 3'] } },
    ],
  },
} as Workflow;

describe('the web UI in a browser', () => {
  let stack: E2eStack;
  let browser: Browser;
  let page: Page;
  let ns: string;

  const shot = async (name: string) => {
    if (!shots) return;
    mkdirSync(shots, { recursive: true });
    await page.screenshot({ path: join(shots, `${name}.png`) });
  };
  const text = (selector: string) => page.$eval(selector, (e) => e.textContent ?? '');
  const waitText = (selector: string, pattern: RegExp, timeout = 60_000) =>
    page.waitForFunction(
      (s: string, p: string) => Array.from(document.querySelectorAll(s)).some((e) => new RegExp(p).test(e.textContent ?? '')),
      { timeout, polling: 100 },
      selector,
      pattern.source,
    );
  const login = async (token: string) => {
    await page.goto(`${stack.server!.url}/#/login`);
    await page.waitForSelector('#token');
    await page.$eval('#token', (e) => ((e as unknown as { value: string }).value = ''));
    await page.type('#token', token);
    await page.click('form button[type=submit]');
  };
  const setNamespace = async () => {
    const input = 'input[aria-label^="Namespace"]';
    await page.waitForSelector(input);
    await page.$eval(input, (e) => ((e as unknown as { value: string }).value = ''));
    await page.type(input, ns);
    await page.keyboard.press('Tab');
  };

  beforeAll(async () => {
    stack = await startE2eStack({ prefix: 'ui', plugins: false, archive: true });
    ns = stack.namespace;
    browser = await launchBrowser();
    page = await browser.newPage();
    await createObject(ns, PLURAL.workflowTemplate, {
      apiVersion: API,
      kind: 'WorkflowTemplate',
      metadata: { name: 'greet' },
      spec: {
        entrypoint: 'main',
        arguments: {
          parameters: [
            { name: 'who', value: 'world' },
            { name: 'mood', value: 'calm', enum: ['calm', 'loud'] },
          ],
        },
        templates: [
          {
            name: 'main',
            container: { image: 'alpine:3.20', command: ['echo', 'hello {{workflow.parameters.who}} ({{workflow.parameters.mood}})'] },
          },
        ],
      },
    });
    await createObject(ns, PLURAL.workflowEventBinding, {
      apiVersion: API,
      kind: 'WorkflowEventBinding',
      metadata: { name: 'on-hello' },
      spec: {
        event: { selector: 'payload.message == "hello"' },
        submit: {
          workflowTemplateRef: { name: 'greet' },
          arguments: { parameters: [{ name: 'who', valueFrom: { event: 'payload.who' } }] },
        },
      },
    });
    await stack.objects.createClusterCustomObject({
      group: GROUP,
      version: VERSION,
      plural: PLURAL.clusterWorkflowTemplate,
      body: {
        apiVersion: API,
        kind: 'ClusterWorkflowTemplate',
        metadata: { name: `greet-${ns}` },
        spec: {
          entrypoint: 'main',
          arguments: { parameters: [{ name: 'who', value: 'cluster' }] },
          templates: [{ name: 'main', container: { image: 'alpine:3.20', command: ['echo', 'hello {{workflow.parameters.who}}'] } }],
        },
      },
    });
    await stack.submit(broken);
  }, 300_000);

  afterAll(async () => {
    await stack?.objects
      .deleteClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL.clusterWorkflowTemplate, name: `greet-${ns}` })
      .catch(() => {});
    await browser?.close();
    await stack?.stop();
  });

  it('refuses a bad token with a clear message, and lets a good one in', async () => {
    await login('this-is-not-a-token');
    await waitText('.error', /Not logged in, or the token was refused/);
    await shot('login');
    await login(cluster().adminToken);
    await page.waitForSelector('header .user');
    expect(await text('header .user')).toBe('admin');
    await setNamespace();
  });

  it('lists a running workflow live, opens it as a graph and watches it finish', async () => {
    await stack.submit(slow);
    await page.goto(`${stack.server!.url}/#/workflows`);
    const row = `a.row[href="#/workflows/${ns}/slow"]`;
    await page.waitForSelector(row, { timeout: 30_000 });
    await waitText(`${row} .phase`, /Running|Pending/);
    await shot('workflows');
    await page.click(row);
    await page.waitForSelector('.graph svg');
    await page.waitForSelector('g.node[aria-label^="prepare"]');
    await waitText('#wf-title .phase', /^Succeeded$/, 90_000);
    // Every step's box turned green as the controller reported it.
    await page.waitForSelector('g.node.kind-node.phase-Succeeded[aria-label^="right"]');
    expect(await page.$$eval('g.node.kind-node', (g) => g.length)).toBe(4); // main, prepare, left, right
    await shot('workflow-graph');
    await page.click('nav.tabs a[href*="tab=timeline"]');
    await page.waitForSelector('ol.timeline li');
    expect(await page.$$eval('ol.timeline li', (li) => li.length)).toBe(3);
    await page.click('nav.tabs a[href*="tab=events"]');
    await waitText('section.events td', /^WorkflowSucceeded$/, 20_000);
  });

  it('lists a finished workflow as archived, with a badge, and opens it from the archive as its graph', async () => {
    // `slow` finished above; the controller archives it and labels it.
    await eventually(async () => {
      const wf = await stack.getWorkflow('slow');
      return wf.metadata?.labels?.['workflows.plugflow.io/workflow-archiving-status'] === 'Archived';
    }, 'slow archived');
    await page.goto(`${stack.server!.url}/#/workflows`);
    const link = `section.archived tr a[href^="#/archived/"]`;
    await waitText(link, /^slow$/, 30_000);
    expect(await text('section.archived .archived-badge')).toBe('archived');
    await page.$$eval(link, (as) =>
      (as as unknown as { textContent: string | null; click(): void }[]).find((a) => a.textContent === 'slow')!.click(),
    );
    await page.waitForSelector('#wf-title .archived-badge');
    const right = 'g.node.kind-node.phase-Succeeded[aria-label^="right"]';
    await page.waitForSelector(right);
    expect(await page.$$eval('g.node.kind-node', (g) => g.length)).toBe(4);
    // Its node panel: no retry, and the log from the archive's route, which says why there is none.
    await page.$eval(right, (g) => (g as unknown as { focus(): void }).focus());
    await page.keyboard.press('Enter');
    await page.waitForSelector('aside.panel');
    await waitText('aside.panel section.logs .error', /its log is kept only when the workflow set archiveLogs/);
    expect(await page.$$('aside.panel button[data-action=retry-node]')).toHaveLength(0);
    await page.click('nav.tabs a[href*="tab=json"]');
    await waitText('pre.json', /"name": "slow"/);
    await shot('archived-workflow');
  });

  it("opens a failed step's log and retries the workflow", async () => {
    await stack.waitForCompletion('broken', 120_000);
    await page.goto(`${stack.server!.url}/#/workflows/${ns}/broken`);
    const failed = 'g.node.kind-node.phase-Failed[aria-label^="crunch"]';
    await page.waitForSelector(failed);
    // Keyboard works as well as the mouse: focus the node and press Enter.
    await page.$eval(failed, (g) => (g as unknown as { focus(): void }).focus());
    expect(await page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toMatch(/^crunch: Failed/);
    await page.keyboard.press('Enter');
    await page.waitForSelector('aside.panel');
    await waitText('pre.log', /crunching failed: boom/);
    expect(await text('aside.panel .facts')).toMatch(/Failed/);
    await shot('node-logs');
    const before = (await stack.getWorkflow('broken')).status!.nodes!;
    const crunchStarted = Object.values(before).find((n) => n.displayName === 'crunch')!.startedAt;
    await page.click('button[data-action=retry]');
    await waitText('.actions .done', /Retry: done/);
    await expect
      .poll(
        async () => Object.values((await stack.getWorkflow('broken')).status!.nodes!).find((n) => n.displayName === 'crunch')?.startedAt,
        {
          timeout: 60_000,
        },
      )
      .not.toBe(crunchStarted);
  });

  it("submits from a template's form with the parameters typed in", async () => {
    await page.goto(`${stack.server!.url}/#/templates/${ns}/greet`);
    await page.waitForSelector('input[name=who]');
    // Typed over the default as a person does (select all, type): the form is controlled, and
    // clearing the element's value without an input event is undone by its next render.
    await page.click('input[name=who]', { count: 3 });
    await page.type('input[name=who]', 'Grace');
    await page.select('form.submit-form select', 'loud');
    await shot('template-form');
    await page.click('form.submit-form button[type=submit]');
    await page.waitForFunction(() => /#\/workflows\/[^/]+\/greet-/.test(location.hash), { timeout: 30_000 });
    const name = decodeURIComponent(await page.evaluate(() => location.hash.split('/')[3].split('?')[0]));
    await waitText('#wf-title .phase', /^Succeeded$/, 90_000);
    const wf = await stack.getWorkflow(name);
    expect(wf.spec.arguments?.parameters).toEqual([
      { name: 'who', value: 'Grace' },
      { name: 'mood', value: 'loud' },
    ]);
  });

  it('the submit page warns of keys read as booleans, naming the line, and refuses several documents saying so', async () => {
    await page.goto(`${stack.server!.url}/#/submit`);
    await page.waitForSelector('form.submit-form textarea');
    const box = 'form.submit-form textarea';
    const typeText = async (t: string) => {
      await page.$eval(box, (e) => ((e as unknown as { value: string }).value = ''));
      await page.type(box, t);
    };
    await typeText(
      'kind: Workflow\nspec:\n  entrypoint: main\n  arguments: {parameters: [{name: p, value: "{{item.n}}"}]}\n  templates: [{name: main, suspend: {}}]\n  x: [{n: 1}]\n',
    );
    await waitText('ul.warnings li', /line 6: the key n is a YAML 1\.1 boolean, as kubectl reads it, so it becomes "false"/);
    await typeText('kind: Workflow\nmetadata: {name: a}\n---\nkind: Workflow\nmetadata: {name: b}\n');
    await page.click('form.submit-form button[type=submit]');
    await waitText('form.submit-form .error', /holds 2 YAML documents \(separated by ---\): the page submits one workflow at a time/);
  });

  it("submits a ClusterWorkflowTemplate's form into the namespace", async () => {
    await page.goto(`${stack.server!.url}/#/cluster-templates/greet-${ns}`);
    await page.waitForSelector('input[name=who]');
    await page.click('form.submit-form button[type=submit]');
    await page.waitForFunction((n: string) => location.hash.includes(`/workflows/${n}/greet-`), { timeout: 30_000 }, ns);
    const name = decodeURIComponent(await page.evaluate(() => location.hash.split('/')[3].split('?')[0]));
    await waitText('#wf-title .phase', /^Succeeded$/, 90_000);
    const wf = await stack.getWorkflow(name);
    expect(wf.spec.workflowTemplateRef).toEqual({ name: `greet-${ns}`, clusterScope: true });
    expect(wf.spec.arguments?.parameters).toEqual([{ name: 'who', value: 'cluster' }]);
  });

  it('tests an event against the bindings without submitting anything', async () => {
    const count = async () =>
      (await stack.objects.listNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: ns, plural: PLURAL.workflow })).items
        .length;
    // One real event first: the binding's row counts it (over every replica, from its Events).
    const sent = await call('POST', `${stack.server!.url}/api/v1/events/${ns}/`, {
      token: cluster().adminToken,
      body: { message: 'hello', who: 'Counted' },
    });
    expect(sent.status).toBe(200);
    await eventually(async () => {
      const r = await call('GET', `${stack.server!.url}/api/v1/workflow-event-bindings/${ns}/counters`, { token: cluster().adminToken });
      return r.body?.bindings?.['on-hello']?.dispatched === 1;
    }, 'the event counted on on-hello');
    const before = await count();
    await page.goto(`${stack.server!.url}/#/bindings`);
    await waitText('table.list summary', /^on-hello$/);
    await waitText('td.counters[data-binding="on-hello"]', /^1 accepted · 1 dispatched · 0 failed · 0 deduplicated$/);
    const payload = 'form.tester textarea';
    await page.$eval(payload, (e) => ((e as unknown as { value: string }).value = ''));
    await page.type(payload, '{"message": "hello", "who": "Ada"}');
    await page.click('form.tester button[type=submit]');
    await page.waitForSelector('li.matched[data-binding="on-hello"]');
    expect(await text('li[data-binding="on-hello"]')).toMatch(/matches/);
    expect(await text('li[data-binding="on-hello"] .counters')).toBe('So far: 1 accepted · 1 dispatched · 0 failed · 0 deduplicated');
    expect(await text('li[data-binding="on-hello"] pre')).toContain('"value": "Ada"');
    await shot('event-tester');
    expect(await count()).toBe(before);

    // "Send it for real" sends what was tested: the same payload (a ' in it) and headers, word for word.
    await page.$eval(payload, (e) => ((e as unknown as { value: string }).value = ''));
    await page.type(payload, '{"message": "hello", "who": "O\'Brien  &  co"}');
    const headerBox = (await page.$$('form.tester textarea'))[1]!;
    await headerBox.evaluate((e) => ((e as unknown as { value: string }).value = ''));
    await headerBox.type("X-Event-Id: delivery 42\nX-Source: it's me");
    await page.click('form.tester button[type=submit]');
    await waitText('li[data-binding="on-hello"] pre', /O'Brien {2}& {2}co/);
    const command = await page.$$eval(
      '.cli',
      (els) =>
        Array.from(els)
          .map((e) => e as unknown as { textContent: string | null; querySelector(s: string): { textContent: string | null } | null })
          .find((e) => (e.textContent ?? '').includes('Send it for real'))!
          .querySelector('code')!.textContent ?? '',
    );
    const argv = JSON.parse(
      execFileSync('sh', [
        '-c',
        `plugflow() { node -e 'console.log(JSON.stringify(process.argv.slice(1)))' -- "$@"; }; ${command}`,
      ]).toString(),
    ) as string[];
    expect(argv).toEqual([
      'event',
      'send',
      ns,
      '',
      '--data',
      '{"message":"hello","who":"O\'Brien  &  co"}',
      '-H',
      'X-Event-Id: delivery 42',
      '-H',
      "X-Source: it's me",
    ]);
  });

  it('keeps loading after many reloads of pages with live streams (the back/forward cache holds none of them open)', async () => {
    for (let i = 0; i < 8; i++) {
      await page.goto(`${stack.server!.url}/?reload=${i}#/workflows/${ns}/broken`, { timeout: 10_000 });
      await page.waitForSelector('g.node', { timeout: 10_000 });
    }
  });

  it("eight open pages, each with a live stream, all load and act (HTTP/2: the browser's six connections are not used up)", async () => {
    const token = cluster().adminToken;
    const pages: Page[] = [];
    try {
      for (let i = 0; i < 8; i++) {
        const p = await browser.newPage();
        await p.evaluateOnNewDocument((t: string) => sessionStorage.setItem('plugflow.token', t), token);
        await p.goto(`${stack.server!.url}/#/workflows/${ns}/broken`);
        await p.waitForSelector('g.node', { timeout: 20_000 });
        pages.push(p);
      }
      // The last page still reaches the server for an action's request: its Events tab lists them.
      const last = pages.at(-1)!;
      await last.goto(`${stack.server!.url}/#/workflows?namespace=${ns}`);
      await last.waitForFunction(
        (name: string) => Array.from(document.querySelectorAll('.rows a.row')).some((r) => (r.textContent ?? '').includes(name)),
        { timeout: 20_000 },
        'broken',
      );
      expect(await last.$('.unanswered')).toBeNull();
    } finally {
      for (const p of pages) await p.close();
    }
  }, 120_000);

  it('says so when the server has not answered a request for a while, naming it', async () => {
    const p = await browser.newPage();
    try {
      await p.evaluateOnNewDocument((t: string) => sessionStorage.setItem('plugflow.token', t), cluster().adminToken);
      await p.setRequestInterception(true);
      p.on('request', (r) => {
        if (r.url().includes('/api/v1/workflow-templates/')) return; // never answered
        void r.continue();
      });
      await p.goto(`${stack.server!.url}/#/templates/${ns}`);
      await p.waitForSelector('.unanswered', { timeout: 20_000 });
      expect(await p.$eval('.unanswered', (e) => e.textContent ?? '')).toMatch(
        /The server has not answered GET \/api\/v1\/workflow-templates\/.* for 8 s or more/,
      );
    } finally {
      await p.close();
    }
  }, 60_000);

  it('fits a phone screen: nothing wider than the viewport', async () => {
    await page.setViewport({ width: 390, height: 844, isMobile: true, hasTouch: true });
    try {
      for (const view of ['#/workflows', `#/workflows/${ns}/broken`, '#/bindings']) {
        await page.goto(`${stack.server!.url}/${view}`);
        await page.waitForSelector('main h1');
        const [scrollWidth, innerWidth] = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
        expect(scrollWidth, view).toBeLessThanOrEqual(innerWidth);
      }
      await page.goto(`${stack.server!.url}/#/workflows/${ns}/broken`);
      await page.waitForSelector('g.node');
      await shot('phone');
    } finally {
      await page.setViewport({ width: 1280, height: 800 });
    }
  });

  it('disables an action the token may not do, and says why', async () => {
    await grantRole(ns, 'alice', 'ui-viewer', [rule('workflows', 'get', 'list', 'watch')]);
    await login(cluster().userTokens.alice);
    await page.waitForSelector('header .user');
    await page.goto(`${stack.server!.url}/#/workflows/${ns}/broken`);
    await page.waitForSelector('button[data-action=delete][disabled]');
    const title = await page.$eval('button[data-action=delete]', (b) => b.getAttribute('title'));
    expect(title).toMatch(/may not delete workflows/);
    // The same reasons in the page, for keyboards and screen readers (a disabled button's title is not).
    expect(await text('details.why')).toMatch(/Delete: forbidden: the token may not delete workflows/);
    expect(await page.$eval('button[data-action=resubmit]', (b) => (b as unknown as { disabled: boolean }).disabled)).toBe(true);
  });
});
