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
const consume: Template = { name: 'consume', inputs: { parameters: [{ name: 'm' }] }, container: { image: 'alpine', args: ['{{inputs.parameters.m}}'] } };

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
            [{ name: 'use', template: 'consume', arguments: { parameters: [{ name: 'm', value: '{{steps.maybe.outputs.parameters.msg}}' }] } }],
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

  it('an output without a default stays unresolved: the consumer errors naming the tag', () => {
    const w = new World({
      entrypoint: 'main',
      templates: [
        {
          name: 'main',
          steps: [
            [{ name: 'maybe', template: 'produce', when: 'false' }],
            [{ name: 'use', template: 'consume', arguments: { parameters: [{ name: 'm', value: '{{steps.maybe.outputs.parameters.bare}}' }] } }],
          ],
        },
        produce,
        consume,
      ],
    });
    w.reconcile();
    expect(w.node('use').phase).toBe('Error');
    expect(w.node('use').message).toContain('{{steps.maybe.outputs.parameters.bare}}');
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
                arguments: { parameters: [{ name: 'm', value: '{{tasks.omitted.outputs.parameters.msg}}/{{tasks.skipped.outputs.parameters.msg}}' }] },
              },
            ],
          },
          outputs: { parameters: [{ name: 'via-expr', valueFrom: { expression: 'tasks.omitted.outputs.parameters.bare', default: 'agg-default' } }] },
        },
        produce,
        consume,
      ],
    });
    w.reconcile();
    expect(w.node('skipped').phase).toBe('Skipped');
    w.succeedPod('gate', { parameters: [{ name: 'msg', value: 'm' }, { name: 'bare', value: 'b' }] });
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
