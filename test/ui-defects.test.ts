/**
 * Defects a user found in the web UI, each shown in a real browser (headless Chromium) against the
 * same parts `plugflow dev` runs (the set-up of ui-browser.test.ts):
 *
 * - the Stop and Terminate dialogs say what the engine does (running steps are stopped either way;
 *   only Stop runs the exit handlers);
 * - an action the token may not do is disabled with its own reason — Retry (which also deletes
 *   pods), Submit, a template's form, a CronWorkflow's Suspend/Resume — and each action names its
 *   own purpose, not that of the first action checked;
 * - relative times and running durations tick while nothing else changes;
 * - typing a name filter does not push a history entry per keystroke;
 * - a CLI hint's Copy button stays in view however long the command;
 * - a workflow without pods shows a progress and its duration;
 * - an expanded group stays within a bounded width, and the view moves to it;
 * - a server that is down is said to be down, and reconnects back off.
 */
import type { Browser, Dialog, Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GROUP, PLURAL, VERSION, type Workflow } from '../src/api/index.js';
import { launchBrowser } from './support/browser.js';
import { cluster } from './support/cluster.js';
import { nodeNamed, startE2eStack, type E2eStack } from './support/e2e.js';
import { createObject, grantRole, rule } from './support/server.js';

// Functions run in the page see the browser's globals; this file is compiled without the DOM library.
interface El {
  textContent: string | null;
  getBoundingClientRect(): { left: number; right: number; top: number; bottom: number; width: number; height: number };
  closest(s: string): El | null;
  scrollLeft: number;
  clientWidth: number;
}
declare const document: {
  querySelector(s: string): El | null;
  querySelectorAll(s: string): ArrayLike<El>;
  elementFromPoint(x: number, y: number): El | null;
};
declare const history: { length: number };
declare const location: { hash: string };

const API = `${GROUP}/${VERSION}`;

const workflow = (name: string, spec: Record<string, unknown>): Workflow =>
  ({ apiVersion: API, kind: 'Workflow', metadata: { name }, spec }) as unknown as Workflow;

/** A step that sleeps for a minute, and an exit handler that says goodbye. */
const sleeper = (name: string) =>
  workflow(name, {
    entrypoint: 'main',
    onExit: 'bye',
    templates: [
      { name: 'main', steps: [[{ name: 'nap', template: 'nap' }]] },
      { name: 'nap', container: { image: 'alpine:3.20', command: ['sh', '-c', 'sleep 60'] } },
      { name: 'bye', container: { image: 'alpine:3.20', command: ['echo', 'bye'] } },
    ],
  });

const broken = workflow('broken', {
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
    { name: 'boom', container: { image: 'alpine:3.20', command: ['sh', '-c', 'exit 3'] } },
  ],
});

/** Waits on a suspend node until resumed: no pod, no status change while it waits. */
const waiting = (name: string) =>
  workflow(name, {
    entrypoint: 'main',
    templates: [
      { name: 'main', steps: [[{ name: 'approve', template: 'approve' }]] },
      { name: 'approve', suspend: {} },
    ],
  });

/** No pod at all: a suspend of two seconds, then a skipped step. */
const podless = workflow('podless', {
  entrypoint: 'main',
  templates: [
    { name: 'main', steps: [[{ name: 'wait', template: 'pause' }], [{ name: 'skip', template: 'pause', when: 'false' }]] },
    { name: 'pause', suspend: { duration: '2' } },
  ],
});

/** Twenty items in a loop: one collapsed box until expanded. */
const wide = workflow('wide', {
  entrypoint: 'main',
  templates: [
    {
      name: 'main',
      steps: [[{ name: 'item', template: 'pause', withSequence: { count: '20' } }]],
    },
    { name: 'pause', suspend: { duration: '0' } },
  ],
});

describe('defects found in the web UI', () => {
  let stack: E2eStack;
  let browser: Browser;
  let page: Page;
  let ns: string;

  const url = (view: string) => `${stack.server!.url}/${view}`;
  const text = (selector: string) => page.$eval(selector, (e) => e.textContent ?? '');
  const attr = (selector: string, name: string) => page.$eval(selector, (e, n) => e.getAttribute(n), name);
  const waitText = (selector: string, pattern: RegExp, timeout = 60_000) =>
    page.waitForFunction(
      (s: string, p: string) => Array.from(document.querySelectorAll(s)).some((e) => new RegExp(p).test(e.textContent ?? '')),
      { timeout, polling: 100 },
      selector,
      pattern.source,
    );
  const login = async (token: string) => {
    await page.goto(url('#/login'));
    await page.waitForSelector('#token');
    await page.$eval('#token', (e) => ((e as unknown as { value: string }).value = ''));
    await page.type('#token', token);
    await page.click('form button[type=submit]');
    await page.waitForSelector('header .user');
    const input = 'input[aria-label^="Namespace"]';
    await page.$eval(input, (e) => ((e as unknown as { value: string }).value = ''));
    await page.type(input, ns);
    await page.keyboard.press('Tab');
  };
  /** Clicks the action's button and answers its confirmation; returns the question asked. */
  const confirmAction = async (action: string, accept: boolean): Promise<string> => {
    const asked = new Promise<string>((resolve) => {
      page.once('dialog', (d: Dialog) => {
        resolve(d.message());
        void (accept ? d.accept() : d.dismiss());
      });
    });
    await page.waitForSelector(`button[data-action=${action}]:not([disabled])`);
    await page.click(`button[data-action=${action}]`);
    return asked;
  };

  beforeAll(async () => {
    stack = await startE2eStack({ prefix: 'ui-defects', plugins: false });
    ns = stack.namespace;
    browser = await launchBrowser();
    page = await browser.newPage();
    await createObject(ns, PLURAL.workflowTemplate, {
      apiVersion: API,
      kind: 'WorkflowTemplate',
      metadata: { name: 'greet' },
      spec: {
        entrypoint: 'main',
        arguments: { parameters: [{ name: 'who', value: 'world' }] },
        templates: [{ name: 'main', container: { image: 'alpine:3.20', command: ['echo', 'hello {{workflow.parameters.who}}'] } }],
      },
    });
    await createObject(ns, PLURAL.cronWorkflow, {
      apiVersion: API,
      kind: 'CronWorkflow',
      metadata: { name: 'nightly' },
      spec: {
        schedule: '0 3 * * *',
        workflowSpec: { entrypoint: 'main', templates: [{ name: 'main', container: { image: 'alpine:3.20', command: ['true'] } }] },
      },
    });
    await stack.submit(broken);
    await stack.submit(waiting('waiting'));
    await login(cluster().adminToken);
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
  });

  it('Stop says running steps are stopped and exit handlers run, and that is what happens', async () => {
    await stack.submit(sleeper('stoppable'));
    await page.goto(url(`#/workflows/${ns}/stoppable`));
    await page.waitForSelector('g.node.kind-node.phase-Running[aria-label^="nap"]', { timeout: 60_000 });
    const question = await confirmAction('stop', true);
    expect(question).toMatch(/running steps are stopped/i);
    expect(question).toMatch(/no new steps start/i);
    expect(question).toMatch(/exit handlers run/i);
    expect(question).not.toMatch(/finish/i);
    const stoppedAt = Date.now();
    const wf = await stack.waitForCompletion('stoppable', 45_000);
    // The running step (a minute of sleep) was stopped, not left to finish; the exit handler ran.
    expect(Date.now() - stoppedAt).toBeLessThan(40_000);
    expect(nodeNamed(wf, 'nap').phase).toBe('Failed');
    expect(nodeNamed(wf, 'nap').message).toMatch(/Stop/);
    expect(nodeNamed(wf, 'onExit').phase).toBe('Succeeded');
  });

  it('Terminate says running steps are stopped and exit handlers do not run, and that is what happens', async () => {
    await stack.submit(sleeper('terminable'));
    await page.goto(url(`#/workflows/${ns}/terminable`));
    await page.waitForSelector('g.node.kind-node.phase-Running[aria-label^="nap"]', { timeout: 60_000 });
    const question = await confirmAction('terminate', true);
    expect(question).toMatch(/running steps are stopped/i);
    expect(question).toMatch(/no new steps start/i);
    expect(question).toMatch(/exit handlers do not run/i);
    const wf = await stack.waitForCompletion('terminable', 45_000);
    expect(nodeNamed(wf, 'nap').phase).toBe('Failed');
    expect(Object.values(wf.status!.nodes!).some((n) => n.displayName === 'onExit')).toBe(false);
  });

  it('ticks relative times and running durations while nothing else changes, without fetching again', async () => {
    // A fresh one: under a minute old, its times tick every second.
    await stack.submit(waiting('young'));
    await page.goto(url(`#/workflows/${ns}/young`));
    await page.waitForSelector('g.node.kind-node.phase-Running[aria-label^="approve"]');
    await page.click('g.node[aria-label^="approve"]');
    await page.waitForSelector('aside.panel');
    const requests: string[] = [];
    const count = (r: { url(): string }) => requests.push(r.url());
    page.on('request', count);
    try {
      const meta = await text('.title-row .meta');
      const panel = await text('aside.panel .facts');
      await new Promise((r) => setTimeout(r, 2500));
      expect(await text('.title-row .meta')).not.toBe(meta);
      expect(await text('aside.panel .facts')).not.toBe(panel);
      expect(requests).toEqual([]);
    } finally {
      page.off('request', count);
    }
    await page.goto(url('#/workflows'));
    const created = `a.row[href="#/workflows/${ns}/young"] .col-created`;
    await page.waitForSelector(created);
    const before = await text(created);
    await new Promise((r) => setTimeout(r, 2500));
    expect(await text(created)).not.toBe(before);
  });

  it('replaces the address while a name filter is typed instead of adding a history entry per keystroke', async () => {
    await page.goto(url('#/workflows'));
    const input = 'form.filters input:not([placeholder])';
    await page.waitForSelector(input);
    const before = await page.evaluate(() => history.length);
    await page.type(input, 'wai');
    await page.waitForFunction(() => location.hash.includes('name=wai'));
    expect(await page.evaluate(() => history.length)).toBe(before);
    await waitText('.table .row .col-name', /^waiting$/);
    expect(await page.$$eval('.rows a.row', (r) => r.length)).toBe(1);
  });

  it("keeps a CLI hint's Copy button in view however long the command", async () => {
    for (const width of [1280, 390]) {
      await page.setViewport({ width, height: 800 });
      await page.goto(url(`#/templates/${ns}/greet`));
      await page.waitForSelector('form.submit-form .cli button');
      const visible = await page.$eval('form.submit-form .cli button', (e) => {
        const b = e as unknown as El;
        const r = b.getBoundingClientRect();
        const box = b.closest('.cli')!.getBoundingClientRect();
        const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
        return r.right <= box.right + 0.5 && r.left >= box.left - 0.5 && hit === b;
      });
      expect(visible, `width ${width}`).toBe(true);
    }
    await page.setViewport({ width: 1280, height: 800 });
  });

  it('shows the progress and the duration of a workflow without pods', async () => {
    await stack.submit(podless);
    await stack.waitForCompletion('podless', 60_000);
    await page.goto(url(`#/workflows/${ns}/podless`));
    await waitText('#wf-title .phase', /^Succeeded$/);
    const meta = await text('.title-row .meta');
    // The controller's progress: 0/0, as the peer counts (pods, tasks and resources; this has none).
    expect(meta).toMatch(/· 0\/0 ·/);
    expect(meta).toMatch(/· 2s$/);
  });

  it('keeps an expanded group within a bounded width and scrolls the view to it', async () => {
    await stack.submit(wide);
    await stack.waitForCompletion('wide', 60_000);
    await page.goto(url(`#/workflows/${ns}/wide`));
    const box = 'g.node.kind-collapsed';
    await page.waitForSelector(box);
    await page.click(box);
    await page.waitForSelector('g.node[aria-label^="item(19"]');
    const width = await page.$eval('.graph svg', (s) => Number(s.getAttribute('width')));
    // Twenty boxes side by side are 3,696 px; wrapped, a row is at most 2,200 px and the margins.
    expect(width).toBeLessThanOrEqual(2232);
    // The first item of the expanded group is on screen.
    const shown = await page.$eval('g.node[aria-label^="item(0"]', (e) => {
      const g = e as unknown as El;
      const r = g.getBoundingClientRect();
      const view = g.closest('.graph-scroll')!.getBoundingClientRect();
      return r.right > view.left && r.left < view.right && r.bottom > view.top && r.top < view.bottom;
    });
    expect(shown).toBe(true);
  });

  it('a token that may list but not watch gets the list read again, not a frozen snapshot, and is told so', async () => {
    await grantRole(ns, 'erin', 'ui-defects-no-watch', [rule('workflows', 'get', 'list')]);
    await login(cluster().userTokens.erin);
    await page.goto(url(`#/workflows?namespace=${ns}`));
    await page.waitForSelector('p.polling');
    expect(await text('p.polling')).toMatch(/may list workflows but not watch them: the list is read again every 10 s/);
    const before = await page.$$eval('.rows a.row', (r) => r.length);
    await stack.submit({ ...podless, metadata: { name: 'appears-later' } } as typeof podless);
    await page.waitForFunction(
      (n: number) => document.querySelectorAll('.rows a.row').length > n,
      { timeout: 30_000, polling: 500 },
      before,
    );
    await login(cluster().adminToken);
  }, 60_000);

  describe('a token that may only look', () => {
    beforeAll(async () => {
      await grantRole(ns, 'bob', 'ui-defects-viewer', [
        rule('workflows', 'get', 'list', 'watch'),
        rule('workflowtemplates', 'get', 'list', 'watch'),
        rule('cronworkflows', 'get', 'list', 'watch'),
      ]);
      await login(cluster().userTokens.bob);
    });

    it('sees each disabled action with its own reason, not that of the first action asked about', async () => {
      await page.goto(url(`#/workflows/${ns}/waiting`));
      await page.waitForSelector('button[data-action=stop][disabled]');
      const reasons: Record<string, RegExp> = {
        retry: /may not patch workflows\b.*so it may not retry workflows/,
        resubmit: /may not create workflows\b.*so it may not resubmit workflows/,
        suspend: /may not patch workflows\b.*so it may not suspend workflows/,
        resume: /may not patch workflows\b.*so it may not resume workflows/,
        stop: /may not patch workflows\b.*so it may not stop workflows/,
        terminate: /may not patch workflows\b.*so it may not terminate workflows/,
        delete: /may not delete workflows\b.*so it may not delete workflows/,
      };
      for (const [action, reason] of Object.entries(reasons)) {
        expect(await attr(`button[data-action=${action}]`, 'title'), action).toMatch(reason);
      }
      expect(await text('details.why')).toMatch(/Retry: forbidden: .*so it may not retry workflows/);
    });

    it('may not submit: the Submit page says so before anything is typed', async () => {
      await page.goto(url('#/submit'));
      await page.waitForSelector('form.submit-form textarea');
      await page.type('form.submit-form textarea', 'metadata: {name: x}\nspec: {entrypoint: main}');
      await page.waitForSelector('form.submit-form button[type=submit][disabled]');
      expect(await attr('form.submit-form button[type=submit]', 'title')).toMatch(/may not create workflows\b.*so it may not submit/);
      expect(await text('form.submit-form .refusal')).toMatch(/may not create workflows/);
    });

    it("may not submit: a template's form is disabled with the reason", async () => {
      await page.goto(url(`#/templates/${ns}/greet`));
      await page.waitForSelector('form.submit-form button[type=submit][disabled]');
      expect(await attr('form.submit-form button[type=submit]', 'title')).toMatch(
        /may not create workflows\b.*submit workflows from templates/,
      );
      expect(await text('form.submit-form .refusal')).toMatch(/may not create workflows/);
    });

    it("may not suspend a CronWorkflow: its button is disabled with the reason (the server's access check must answer cronSuspend)", async () => {
      await page.goto(url('#/cron'));
      const button = 'button[data-action=cron-suspend]';
      await page.waitForSelector(`${button}[disabled]`);
      expect(await attr(button, 'title')).toMatch(/may not patch cronworkflows\b.*so it may not suspend cron workflows/);
      expect(await text('details.why')).toMatch(/Suspend: forbidden/);
    });
  });

  it('disables Retry for a token that may change workflows but not delete their pods (the server must check the pods Retry deletes)', async () => {
    await stack.waitForCompletion('broken', 120_000);
    await grantRole(ns, 'carol', 'ui-defects-operator', [
      rule('workflows', 'get', 'list', 'watch', 'patch', 'update'),
      rule('workflows/status', 'update'),
    ]);
    await login(cluster().userTokens.carol);
    await page.goto(url(`#/workflows/${ns}/broken`));
    await page.waitForSelector('button[data-action=stop][disabled]'); // finished: refused by state, so access has been asked
    await page.waitForSelector('button[data-action=retry][disabled]');
    expect(await attr('button[data-action=retry]', 'title')).toMatch(/may not (delete|get) pods\b.*so it may not retry workflows/);
    await login(cluster().adminToken);
  });

  it('says the server is down (not a namespace hint), and backs off its reconnects', async () => {
    await page.goto(url('#/workflows'));
    const input = 'input[aria-label^="Namespace"]';
    await page.$eval(input, (e) => ((e as unknown as { value: string }).value = ''));
    await page.focus(input);
    await page.keyboard.press('Tab'); // all namespaces
    await page.waitForSelector(`a.row[href="#/workflows/${ns}/waiting"]`);
    // The server "goes down": every call to it fails at the network level.
    const tries: number[] = [];
    await page.setRequestInterception(true);
    const down = (r: { url(): string; abort(e?: string): Promise<void>; continue(): Promise<void> }) => {
      if (r.url().includes('/api/')) {
        tries.push(Date.now());
        void r.abort('connectionrefused');
      } else void r.continue();
    };
    page.on('request', down);
    try {
      // The list's stream starts again (as after the server closed it), and cannot connect.
      await page.evaluate(() => (location.hash = '#/templates'));
      await page.evaluate(() => (location.hash = '#/workflows'));
      await waitText('.error', /server is not reachable/i, 20_000);
      expect(await text('.error')).not.toMatch(/Namespace box/);
      const start = tries.length;
      await new Promise((r) => setTimeout(r, 6000));
      // Waits of 1 s, 2 s, 4 s…: at most three more tries in six seconds, not six.
      expect(tries.length - start).toBeLessThanOrEqual(3);
    } finally {
      page.off('request', down);
      await page.setRequestInterception(false);
    }
    // Back up: the list comes back by itself.
    await page.waitForSelector(`a.row[href="#/workflows/${ns}/waiting"]`, { timeout: 40_000 });
  });
});
