/**
 * Outputs of steps and tasks that never ran (Skipped by `when`, Omitted by `depends`) read as the
 * producing template's declared `valueFrom.default`, as in the peer since 3.7.16/4.0.7.
 */
import { describe, expect, it } from 'vitest';
import type { Template } from '../api/index.js';
import { World } from './test-world.js';

const produce: Template = {
  name: 'produce',
  container: { image: 'alpine' },
  outputs: {
    parameters: [
      { name: 'msg', valueFrom: { path: '/tmp/msg', default: 'fallback' } },
      { name: 'bare', valueFrom: { path: '/tmp/bare' } },
    ],
  },
};
const consume: Template = {
  name: 'consume',
  inputs: { parameters: [{ name: 'm' }] },
  container: { image: 'alpine', args: ['{{inputs.parameters.m}}'] },
};

function argsOf(w: World, name: string): string[] | undefined {
  return w.created.get(w.pod(name).podName)!.template.container?.args;
}

describe('outputs of skipped and omitted nodes', () => {
  it('a skipped step offers its declared valueFrom.default, so the consumer runs', () => {
    const w = new World({
      entrypoint: 'main',
      templates: [
        {
          name: 'main',
          steps: [
            [{ name: 'maybe', template: 'produce', when: 'false' }],
            [
              {
                name: 'use',
                template: 'consume',
                arguments: { parameters: [{ name: 'm', value: '{{steps.maybe.outputs.parameters.msg}}' }] },
              },
            ],
          ],
          outputs: { parameters: [{ name: 'out', valueFrom: { parameter: '{{steps.maybe.outputs.parameters.msg}}' } }] },
        },
        produce,
        consume,
      ],
    });
    w.reconcile();
    expect(w.node('maybe').phase).toBe('Skipped');
    expect(w.node('maybe').outputs).toBeUndefined();
    expect(argsOf(w, 'use')).toEqual(['fallback']);
    w.succeedAll();
    w.reconcile();
    expect(w.status.phase).toBe('Succeeded');
    expect(w.node('wf').outputs?.parameters).toEqual([{ name: 'out', value: 'fallback' }]);
  });

  /** A steps workflow whose second step passes `value` to `consumer` after `maybe` was skipped. */
  function afterSkip(value: string, consumer: Template = consume): World {
    return new World({
      entrypoint: 'main',
      templates: [
        {
          name: 'main',
          steps: [
            [{ name: 'maybe', template: 'produce', when: 'false' }],
            [{ name: 'use', template: consumer.name, arguments: { parameters: [{ name: 'm', value }] } }],
          ],
        },
        produce,
        consumer,
      ],
    });
  }

  it('an output without a default is absent: a bare reference lets the consumer input default apply', () => {
    const w = afterSkip('{{steps.maybe.outputs.parameters.bare}}', {
      ...consume,
      name: 'consume-default',
      inputs: { parameters: [{ name: 'm', default: 'input-default' }] },
    });
    w.reconcile();
    expect(argsOf(w, 'use')).toEqual(['input-default']);
  });

  it('an absent output with no input default errors the consumer, naming the parameter', () => {
    const w = afterSkip('{{steps.maybe.outputs.parameters.bare}}');
    w.reconcile();
    expect(w.node('use')).toMatchObject({
      phase: 'Error',
      message:
        'spec.templates[consume].inputs.parameters[m]: the argument references an output of a skipped or omitted step that declares no default (give the output a valueFrom.default or this parameter a default)',
    });
  });

  it('an absent output is nil in an expression tag (?? works) and fails inside other text', () => {
    const w = afterSkip("{{= steps.maybe.outputs.parameters.bare ?? 'chosen'}}");
    w.reconcile();
    expect(argsOf(w, 'use')).toEqual(['chosen']);
    const x = afterSkip('x-{{steps.maybe.outputs.parameters.bare}}');
    x.reconcile();
    expect(x.node('use').phase).toBe('Error');
    expect(x.node('use').message).toContain('{{steps.maybe.outputs.parameters.bare}} (1:3) has no value');
  });

  it('an omitted or skipped DAG task offers its defaults to a task that still runs', () => {
    const w = new World({
      entrypoint: 'main',
      templates: [
        {
          name: 'main',
          dag: {
            tasks: [
              { name: 'gate', template: 'produce' },
              { name: 'omitted', template: 'produce', depends: 'gate.Failed' },
              { name: 'skipped', template: 'produce', when: '1 == 2' },
              {
                name: 'use',
                template: 'consume',
                depends: 'gate && (omitted.Succeeded || omitted.Omitted) && skipped',
                arguments: {
                  parameters: [{ name: 'm', value: '{{tasks.omitted.outputs.parameters.msg}}/{{tasks.skipped.outputs.parameters.msg}}' }],
                },
              },
            ],
          },
          outputs: {
            parameters: [{ name: 'via-expr', valueFrom: { expression: 'tasks.omitted.outputs.parameters.bare', default: 'agg-default' } }],
          },
        },
        produce,
        consume,
      ],
    });
    w.reconcile();
    expect(w.node('skipped').phase).toBe('Skipped');
    w.succeedPod('gate', {
      parameters: [
        { name: 'msg', value: 'm' },
        { name: 'bare', value: 'b' },
      ],
    });
    w.reconcile();
    expect(w.node('omitted').phase).toBe('Omitted');
    expect(argsOf(w, 'use')).toEqual(['fallback/fallback']);
    w.succeedAll();
    w.reconcile();
    expect(w.status.phase).toBe('Succeeded');
    // The aggregating output's expression fails (the omitted task has no `bare`): its default applies.
    expect(w.node('wf').outputs?.parameters).toEqual([{ name: 'via-expr', value: 'agg-default' }]);
  });
});
