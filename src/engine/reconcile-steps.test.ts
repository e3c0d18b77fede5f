import { describe, expect, it } from 'vitest';
import type { Template, WorkflowSpec } from '../api/index.js';
import { World } from './test-world.js';

const echo: Template = {
  name: 'echo',
  inputs: { parameters: [{ name: 'msg', default: 'hi' }] },
  container: { image: 'alpine', args: ['{{inputs.parameters.msg}}'] },
};

function spec(main: Omit<Template, 'name'>, ...more: Template[]): WorkflowSpec {
  return { entrypoint: 'main', templates: [{ name: 'main', ...main }, echo, ...more] };
}

describe('steps', () => {
  it("fails a loop over the controller's item guard, naming the field, and starts none of it", () => {
    const w = new World(spec({ steps: [[{ name: 'each', template: 'echo', withSequence: { count: '4' } }]] }));
    w.maxLoopItems = 3;
    w.reconcile();
    expect(w.runningPods()).toEqual([]);
    expect(w.status.phase).toBe('Error');
    expect(w.node('wf[0].each').message).toMatch(
      /spec\.templates\[main\]\.steps\[0\]\[each\]\.withSequence: expands to 4 items, more than the limit of 3 \(the controller's --max-loop-items\)/,
    );
    const again = new World(spec({ steps: [[{ name: 'each', template: 'echo', withSequence: { count: '4' } }]] }));
    again.maxLoopItems = 4;
    again.reconcile();
    expect(again.runningPods()).toHaveLength(4);
  });

  it('runs groups one after another and the steps of a group in parallel', () => {
    const w = new World(
      spec({
        steps: [
          [
            { name: 'a', template: 'echo' },
            { name: 'b', template: 'echo' },
          ],
          [{ name: 'c', template: 'echo' }],
        ],
      }),
    );
    w.reconcile();
    expect(w.runningPods()).toEqual(['a', 'b']);
    w.succeedPod('a');
    w.reconcile();
    expect(w.runningPods()).toEqual(['b']);
    w.succeedPod('b');
    w.reconcile();
    expect(w.runningPods()).toEqual(['c']);
    expect(w.node('wf[0]').phase).toBe('Succeeded');
    w.succeedPod('c');
    w.reconcile();
    expect(w.status.phase).toBe('Succeeded');
    expect(w.status.progress).toBe('3/3');
  });

  it('passes outputs of earlier steps to later ones', () => {
    const w = new World(
      spec(
        {
          steps: [
            [{ name: 'gen', template: 'gen' }],
            [
              {
                name: 'use',
                template: 'echo',
                arguments: { parameters: [{ name: 'msg', value: '{{steps.gen.outputs.result}}-{{steps.gen.outputs.parameters.p}}' }] },
              },
            ],
          ],
        },
        {
          name: 'gen',
          outputs: { parameters: [{ name: 'p', valueFrom: { path: '/tmp/p' } }] },
          script: { image: 'python', source: 'print(1)' },
        },
      ),
    );
    w.reconcile();
    w.succeedPod('gen', { result: '42', parameters: [{ name: 'p', value: 'x' }] });
    w.reconcile();
    const created = w.created.get(w.pod('use').podName)!;
    expect(created.template.container?.args).toEqual(['42-x']);
    expect(created.template.inputs?.parameters).toEqual([{ name: 'msg', value: '42-x' }]);
    expect(w.node('use').inputs?.parameters).toEqual([{ name: 'msg', value: '42-x' }]);
  });

  it('fails the workflow when a step fails, and starts no later group', () => {
    const w = new World(spec({ steps: [[{ name: 'a', template: 'echo' }], [{ name: 'b', template: 'echo' }]] }));
    w.reconcile();
    w.failPod('a', 'boom');
    w.reconcile();
    expect(w.nodesNamed('b')).toHaveLength(0);
    expect(w.node('wf[0]')).toMatchObject({ phase: 'Failed', message: 'step "a" failed: boom' });
    expect(w.status).toMatchObject({ phase: 'Failed', message: 'step "a" failed: boom' });
  });

  it('lets the other items of a loop finish when one fails, then fails', () => {
    const w = new World(
      spec({
        steps: [
          [{ name: 'x', template: 'echo', withItems: ['a', 'b', 'c'], arguments: { parameters: [{ name: 'msg', value: '{{item}}' }] } }],
          [{ name: 'after', template: 'echo' }],
        ],
      }),
    );
    w.reconcile();
    expect(w.runningPods()).toEqual(['x(0:a)', 'x(1:b)', 'x(2:c)']);
    expect(w.created.get(w.pod('x(1:b)').podName)!.template.container?.args).toEqual(['b']);
    w.failPod('x(1:b)');
    w.succeedPod('x(0:a)');
    w.reconcile();
    expect(w.status.phase).toBe('Running');
    expect(w.runningPods()).toEqual(['x(2:c)']);
    w.succeedPod('x(2:c)');
    w.reconcile();
    expect(w.status).toMatchObject({ phase: 'Failed', message: 'step "x(1:b)" failed: Error (exit code 1)' });
    expect(w.nodesNamed('after')).toHaveLength(0);
  });

  it('stops starting items after a failure with failFast and parallelism', () => {
    const w = new World(spec({ parallelism: 1, failFast: true, steps: [[{ name: 'x', template: 'echo', withItems: [1, 2, 3] }]] }));
    w.reconcile();
    expect(w.runningPods()).toEqual(['x(0:1)']);
    w.failPod('x(0:1)');
    w.reconcile();
    expect(w.runningPods()).toEqual([]);
    expect(w.created.size).toBe(1);
    expect(w.status.phase).toBe('Failed');
  });

  it('runs items one at a time under template parallelism', () => {
    const w = new World(spec({ parallelism: 1, steps: [[{ name: 'x', template: 'echo', withSequence: { count: 3 } }]] }));
    w.reconcile();
    expect(w.runningPods()).toEqual(['x(0:0)']);
    w.failPod('x(0:0)');
    w.reconcile();
    // Without failFast the remaining items still run.
    expect(w.runningPods()).toEqual(['x(1:1)']);
  });

  it('skips a step whose when is false and continues', () => {
    const w = new World(
      spec({
        steps: [
          [{ name: 'flip', template: 'echo' }],
          [
            { name: 'heads', template: 'echo', when: '{{steps.flip.outputs.result}} == heads' },
            { name: 'tails', template: 'echo', when: '{{steps.flip.outputs.result}} == tails' },
          ],
        ],
      }),
    );
    w.reconcile();
    w.succeedPod('flip', { result: 'tails' });
    w.reconcile();
    expect(w.node('heads')).toMatchObject({ type: 'Skipped', phase: 'Skipped', message: 'when "tails == heads" evaluated false' });
    expect(w.runningPods()).toEqual(['tails']);
    w.succeedPod('tails');
    w.reconcile();
    expect(w.status.phase).toBe('Succeeded');
  });

  it('continues past a failed step with continueOn.failed', () => {
    const w = new World(
      spec({
        steps: [
          [{ name: 'a', template: 'echo', continueOn: { failed: true } }],
          [{ name: 'b', template: 'echo', arguments: { parameters: [{ name: 'msg', value: '{{steps.a.status}}' }] } }],
        ],
      }),
    );
    w.reconcile();
    w.failPod('a');
    w.reconcile();
    expect(w.created.get(w.pod('b').podName)!.template.container?.args).toEqual(['Failed']);
    w.succeedPod('b');
    w.reconcile();
    expect(w.status.phase).toBe('Succeeded');
  });

  it('does not continue past an Error with only continueOn.failed', () => {
    const w = new World(
      spec({ steps: [[{ name: 'a', template: 'echo', continueOn: { failed: true } }], [{ name: 'b', template: 'echo' }]] }),
    );
    w.reconcile();
    w.pod('a').phase = 'Deleted';
    w.reconcile();
    expect(w.status.phase).toBe('Error');
    expect(w.nodesNamed('b')).toHaveLength(0);
  });

  it('expands withParam from an earlier output and aggregates loop outputs', () => {
    const w = new World(
      spec({
        steps: [
          [{ name: 'gen', template: 'echo' }],
          [
            {
              name: 'each',
              template: 'echo',
              withParam: '{{steps.gen.outputs.result}}',
              arguments: { parameters: [{ name: 'msg', value: '{{item.os}}/{{item.n}}' }] },
            },
          ],
          [{ name: 'sum', template: 'echo', arguments: { parameters: [{ name: 'msg', value: '{{steps.each.outputs.result}}' }] } }],
        ],
      }),
    );
    w.reconcile();
    w.succeedPod('gen', { result: '[{"os":"linux","n":1},{"os":"mac","n":2}]' });
    w.reconcile();
    expect(w.runningPods()).toEqual(['each(0:n:1,os:linux)', 'each(1:n:2,os:mac)']);
    expect(w.created.get(w.pod('each(1:n:2,os:mac)').podName)!.template.container?.args).toEqual(['mac/2']);
    w.succeedPod('each(0:n:1,os:linux)', { result: 'L' });
    w.succeedPod('each(1:n:2,os:mac)', { result: 'M' });
    w.reconcile();
    expect(w.created.get(w.pod('sum').podName)!.template.container?.args).toEqual(['["L","M"]']);
  });

  it('fails a step whose withParam is not a JSON list, naming the field', () => {
    const w = new World(
      spec({
        steps: [[{ name: 'gen', template: 'echo' }], [{ name: 'each', template: 'echo', withParam: '{{steps.gen.outputs.result}}' }]],
      }),
    );
    w.reconcile();
    w.succeedPod('gen', { result: 'not json' });
    w.reconcile();
    expect(w.node('each')).toMatchObject({
      phase: 'Error',
      message: 'spec.templates[main].steps[1][each].withParam: is not a JSON list: "not json"',
    });
    expect(w.status.phase).toBe('Error');
  });

  it('skips a loop with no items', () => {
    const w = new World(spec({ steps: [[{ name: 'none', template: 'echo', withItems: [] }]] }));
    w.reconcile();
    expect(w.node('none')).toMatchObject({ phase: 'Skipped', message: 'the loop has no items' });
    expect(w.status.phase).toBe('Succeeded');
  });

  it('runs nested steps templates with their own boundary', () => {
    const w = new World(
      spec({ steps: [[{ name: 'outer', template: 'inner' }]] }, { name: 'inner', steps: [[{ name: 'leaf', template: 'echo' }]] }),
    );
    w.reconcile();
    const outer = w.node('outer');
    expect(outer.type).toBe('Steps');
    expect(w.node('leaf')).toMatchObject({ name: 'wf[0].outer[0].leaf', boundaryID: outer.id });
    w.succeedPod('leaf');
    w.reconcile();
    expect(w.status.phase).toBe('Succeeded');
  });

  it('exports steps outputs through valueFrom.parameter and expression', () => {
    const w = new World({
      entrypoint: 'main',
      templates: [
        {
          name: 'main',
          steps: [[{ name: 'inner', template: 'pair' }]],
          outputs: { parameters: [{ name: 'both', valueFrom: { parameter: '{{steps.inner.outputs.parameters.sum}}!' } }] },
        },
        {
          name: 'pair',
          steps: [
            [
              { name: 'a', template: 'echo' },
              { name: 'b', template: 'echo' },
            ],
          ],
          outputs: {
            parameters: [{ name: 'sum', valueFrom: { expression: 'asInt(steps.a.outputs.result) + asInt(steps.b.outputs.result)' } }],
          },
        },
        echo,
      ],
    });
    w.reconcile();
    w.succeedPod('a', { result: '2' });
    w.succeedPod('b', { result: '3' });
    w.reconcile();
    expect(w.node('inner').outputs?.parameters).toEqual([{ name: 'sum', value: '5' }]);
    expect(w.node('wf').outputs?.parameters).toEqual([{ name: 'both', value: '5!' }]);
    expect(w.status.phase).toBe('Succeeded');
  });

  it('runs inline and script templates and exposes exit codes', () => {
    const w = new World(
      spec({
        steps: [
          [
            {
              name: 'code',
              inline: { name: '', script: { image: 'python', command: ['python'], source: 'import sys; sys.exit(3)' } },
              continueOn: { failed: true },
            },
          ],
          [
            {
              name: 'check',
              template: 'echo',
              when: '{{=steps.code.exitCode == "3"}}',
              arguments: { parameters: [{ name: 'msg', value: 'code={{steps.code.exitCode}}' }] },
            },
          ],
        ],
      }),
    );
    w.reconcile();
    const created = w.created.get(w.pod('code').podName)!;
    expect(created.template.script?.source).toBe('import sys; sys.exit(3)');
    expect(w.node('code').templateName).toBeUndefined();
    w.failPod('code', 'Error (exit code 3)', '3');
    w.reconcile();
    expect(w.created.get(w.pod('check').podName)!.template.container?.args).toEqual(['code=3']);
  });
});
