import { describe, expect, it } from 'vitest';
import type { Template } from '../api/index.js';
import { World } from './test-world.js';

const clash: Template = { name: 'clash', plugin: { 'fz-clash': { x: 1 } } };
const good: Template = { name: 'good', plugin: { 'soak-instant': {} } };
const fetch: Template = { name: 'fetch', http: { url: 'https://example.com/' } };
const reason =
  'ConfigMap fuzz/fz-clash-executor-plugin is left out of agent pods: its data["sidecar.container"].name "soak-instant" is also …';

describe('plugins left out of the agent pod', () => {
  it('fails a step naming a left-out plugin with the reason; other plugin and http steps run', () => {
    const w = new World({
      entrypoint: 'main',
      templates: [
        {
          name: 'main',
          steps: [
            [
              { name: 'bad', template: 'clash' },
              { name: 'ok', template: 'good' },
              { name: 'web', template: 'fetch' },
            ],
          ],
        },
        clash,
        good,
        fetch,
      ],
    });
    w.excludedPlugins = { 'fz-clash': reason };
    const r = w.reconcile();
    expect(w.node('bad')).toMatchObject({
      type: 'Plugin',
      phase: 'Failed',
      message: `plugin "fz-clash" is not available to this workflow: ${reason}`,
    });
    expect(r.actions.filter((a) => a.kind === 'writeTask').map((a) => (a.kind === 'writeTask' ? a.nodeId : ''))).toEqual([
      w.node('ok').id,
      w.node('web').id,
    ]);
    w.reportTask('ok', 'Succeeded');
    w.reportTask('web', 'Succeeded');
    w.reconcile();
    expect(w.status.phase).toBe('Failed');
    expect(w.status.message).toContain(
      'plugin "fz-clash" is not available to this workflow: ConfigMap fuzz/fz-clash-executor-plugin is left out of agent pods',
    );
  });

  it('is not fooled by plugin names that are also names of object properties', () => {
    const w = new World({ entrypoint: 'p', templates: [{ name: 'p', plugin: { constructor: {} } }] });
    w.excludedPlugins = { other: reason };
    w.reconcile();
    expect(w.node('wf').phase).toBe('Pending');
  });

  it('does not touch a task already handed to the agent when a clash appears later', () => {
    const w = new World({ entrypoint: 'clash', templates: [clash] });
    w.reconcile();
    w.reportTask('wf', 'Running');
    w.reconcile();
    w.excludedPlugins = { 'fz-clash': reason };
    w.reconcile();
    expect(w.node('wf').phase).toBe('Running');
  });
});
