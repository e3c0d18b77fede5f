import { describe, expect, it } from 'vitest';
import type { Template } from '../api/index.js';
import { withWorkflowDefaults } from './template-defaults.js';
import { World } from './test-world.js';
import { validateWorkflow } from './validate.js';

const echo: Template = { name: 'echo', container: { image: 'alpine', command: ['echo'], env: [{ name: 'A', value: '1' }] } };

describe('templateDefaults', () => {
  it('merges objects key by key with the template winning; lists and scalars of the template replace', () => {
    const out = withWorkflowDefaults(
      { ...echo, timeout: '5s', nodeSelector: { disk: 'ssd' } },
      {
        timeout: '1m',
        activeDeadlineSeconds: 30,
        nodeSelector: { zone: 'a', disk: 'hdd' },
        container: { image: 'busybox', imagePullPolicy: 'Always', env: [{ name: 'B', value: '2' }] },
      },
      undefined,
    );
    expect(out).toEqual({
      name: 'echo',
      timeout: '5s',
      activeDeadlineSeconds: 30,
      nodeSelector: { zone: 'a', disk: 'ssd' },
      container: { image: 'alpine', imagePullPolicy: 'Always', command: ['echo'], env: [{ name: 'A', value: '1' }] },
    });
  });

  it('lays a kind section only under templates of that kind (a steps template gets no container)', () => {
    const steps: Template = { name: 'main', steps: [[{ name: 'a', template: 'echo' }]] };
    expect(withWorkflowDefaults(steps, { container: { image: 'busybox' }, timeout: '1m' }, undefined)).toEqual({ ...steps, timeout: '1m' });
  });

  it('never writes through __proto__ keys of user JSON', () => {
    const defaults = JSON.parse('{"nodeSelector": {"__proto__": {"polluted": "yes"}}}') as Partial<Template>;
    const out = withWorkflowDefaults({ ...echo, nodeSelector: { a: 'b' } }, defaults, undefined);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.hasOwn(out.nodeSelector!, '__proto__')).toBe(true);
  });

  it('reaches the pods the engine creates, also for templates of a referred WorkflowTemplate', () => {
    const w = new World(
      {
        entrypoint: 'main',
        templateDefaults: { container: { image: 'busybox', env: [{ name: 'D', value: 'd' }] } as never, activeDeadlineSeconds: 7 },
        templates: [
          {
            name: 'main',
            steps: [[{ name: 'own', template: 'plain' }], [{ name: 'ref', templateRef: { name: 'lib', template: 'lib-t' } }]],
          },
          { name: 'plain', container: { command: ['true'] } as never },
        ],
      },
      { templates: { 'WorkflowTemplate/lib': { templates: [{ name: 'lib-t', container: { image: 'alpine', command: ['true'] } }] } } },
    );
    w.reconcile();
    const own = w.created.get(w.pod('own').podName)!.template;
    expect(own.container).toEqual({ image: 'busybox', command: ['true'], env: [{ name: 'D', value: 'd' }] });
    expect(own.activeDeadlineSeconds).toBe(7);
    w.succeedPod('own');
    w.reconcile();
    const ref = w.created.get(w.pod('ref').podName)!.template;
    expect(ref.container).toEqual({ image: 'alpine', command: ['true'], env: [{ name: 'D', value: 'd' }] });
    expect(ref.activeDeadlineSeconds).toBe(7);
  });

  it('validates the templates with the defaults merged: an image given only by the defaults is enough', () => {
    const spec = {
      entrypoint: 'plain',
      templateDefaults: { container: { image: 'busybox' } as never },
      templates: [{ name: 'plain', container: { command: ['true'] } as never }],
    };
    const wf = { metadata: { name: 'wf' }, spec };
    expect(validateWorkflow(wf, {}).map((e) => e.message)).toEqual([]);
    expect(
      validateWorkflow({ ...wf, spec: { ...spec, templateDefaults: undefined } }, {})
        .map((e) => e.message)
        .join(),
    ).toMatch(/image/);
  });
});

describe('workflow-level retryStrategy', () => {
  it('applies to templates without their own; a template with one keeps it', () => {
    const w = new World({
      entrypoint: 'main',
      retryStrategy: { limit: 1 },
      templates: [
        {
          name: 'main',
          steps: [
            [
              { name: 'a', template: 'plain' },
              { name: 'b', template: 'own' },
            ],
          ],
        },
        { name: 'plain', container: { image: 'alpine', command: ['false'] } },
        { name: 'own', retryStrategy: { limit: 0 }, container: { image: 'alpine', command: ['false'] } },
      ],
    });
    w.reconcile();
    expect(w.node('a').type).toBe('Retry');
    w.failPod('a(0)');
    w.failPod('b(0)');
    w.reconcile();
    expect(w.runningPods()).toEqual(['a(1)']);
    expect(w.node('b').phase).toBe('Failed');
  });

  it('comes after templateDefaults.retryStrategy', () => {
    const t = withWorkflowDefaults(echo, { retryStrategy: { limit: 4 } }, { limit: 1 });
    expect(t.retryStrategy).toEqual({ limit: 4 });
    expect(withWorkflowDefaults(echo, undefined, { limit: 1 }).retryStrategy).toEqual({ limit: 1 });
  });
});
