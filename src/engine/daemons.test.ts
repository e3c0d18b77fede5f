import { describe, expect, it } from 'vitest';
import type { Template, Workflow, WorkflowSpec } from '../api/index.js';
import { World } from './test-world.js';
import { validateWorkflow } from './validate.js';

const server: Template = { name: 'server', daemon: true, container: { image: 'nginx', command: ['nginx', '-g', 'daemon off;'] } };
const client: Template = {
  name: 'client',
  inputs: { parameters: [{ name: 'ip' }] },
  container: { image: 'curl', command: ['curl', 'http://{{inputs.parameters.ip}}'] },
};

const ready = (w: World, name: string, ip = '10.88.0.7'): void => {
  const pod = w.pod(name);
  pod.phase = 'Running';
  pod.ready = true;
  pod.podIP = ip;
};

describe('daemon steps', () => {
  const spec = (): WorkflowSpec => ({
    entrypoint: 'main',
    templates: [
      {
        name: 'main',
        steps: [
          [{ name: 'server', template: 'server' }],
          [{ name: 'client', template: 'client', arguments: { parameters: [{ name: 'ip', value: '{{steps.server.ip}}' }] } }],
        ],
      },
      server,
      client,
    ],
  });

  it('is done once its container is ready, passes its IP on, and is stopped with its pod when the steps end', () => {
    const w = new World(spec());
    w.reconcile();
    w.startPod('server');
    w.reconcile();
    expect(w.nodesNamed('client')).toEqual([]);
    ready(w, 'server');
    w.reconcile();
    expect(w.node('server')).toMatchObject({ phase: 'Running', daemoned: true, podIP: '10.88.0.7' });
    expect(w.created.get(w.pod('client').podName)!.template.container?.command).toEqual(['curl', 'http://10.88.0.7']);
    w.succeedPod('client');
    const result = w.reconcile();
    expect(w.status.phase).toBe('Succeeded');
    expect(w.node('server')).toMatchObject({ phase: 'Succeeded', message: 'daemon stopped: wf ended' });
    expect(result.actions).toContainEqual(expect.objectContaining({ kind: 'deletePod', podName: w.node('server').podName }));
  });

  it('fails its step when the pod fails before it is ready', () => {
    const w = new World(spec());
    w.reconcile();
    w.failPod('server', 'crashed');
    w.reconcile();
    expect(w.status).toMatchObject({ phase: 'Failed', message: 'step "server" failed: crashed' });
  });

  it('works in a DAG, retried, with {{tasks.X.ip}}', () => {
    const w = new World({
      entrypoint: 'main',
      templates: [
        {
          name: 'main',
          dag: {
            tasks: [
              { name: 'db', template: 'db' },
              { name: 'use', template: 'client', depends: 'db', arguments: { parameters: [{ name: 'ip', value: '{{tasks.db.ip}}' }] } },
            ],
          },
        },
        { ...server, name: 'db', retryStrategy: { limit: 2 } },
        client,
      ],
    });
    w.reconcile();
    w.failPod('db(0)');
    w.reconcile();
    ready(w, 'db(1)', '10.88.0.9');
    w.reconcile();
    expect(w.node('db')).toMatchObject({ type: 'Retry', phase: 'Running', daemoned: true, podIP: '10.88.0.9' });
    expect(w.created.get(w.pod('use').podName)!.template.container?.command).toEqual(['curl', 'http://10.88.0.9']);
    w.succeedPod('use');
    w.reconcile();
    expect(w.status.phase).toBe('Succeeded');
    expect([w.node('db').phase, w.node('db(1)').phase]).toEqual(['Succeeded', 'Succeeded']);
  });
});

describe('validating daemons', () => {
  const messages = (spec: WorkflowSpec): string[] =>
    validateWorkflow({ metadata: { name: 'wf', namespace: 'ns' }, spec } as Workflow).map((e) => e.message);

  it('only container and script templates can be daemons, and a daemon step takes no exit hook', () => {
    expect(
      messages({
        entrypoint: 'main',
        templates: [
          { name: 'main', daemon: true, steps: [[{ name: 's', template: 'server', hooks: { exit: { template: 'server' } } }]] },
          server,
        ],
      }),
    ).toEqual([
      'spec.templates[main].daemon only container and script templates can be daemons (their pod serves while the steps or DAG that started it run)',
      'spec.templates[main].steps[0][s].hooks.exit calls a daemon template, which runs until its steps or DAG end, so the exit hook would never run; put it on the step that calls those steps',
    ]);
  });
});
