import { describe, expect, it } from 'vitest';
import type { DAGTask, DAGTemplate, Template, WorkflowSpec } from '../api/index.js';
import { World } from './test-world.js';

const echo: Template = {
  name: 'echo',
  inputs: { parameters: [{ name: 'msg', default: 'hi' }] },
  container: { image: 'alpine', args: ['{{inputs.parameters.msg}}'] },
};

function dag(tasks: DAGTask[], extra: Partial<DAGTemplate> = {}, more: Template[] = []): WorkflowSpec {
  return { entrypoint: 'main', templates: [{ name: 'main', dag: { tasks, ...extra } }, echo, ...more] };
}

const diamond: DAGTask[] = [
  { name: 'a', template: 'echo' },
  { name: 'b', template: 'echo', dependencies: ['a'] },
  { name: 'c', template: 'echo', depends: 'a' },
  {
    name: 'd',
    template: 'echo',
    depends: 'b && c',
    arguments: { parameters: [{ name: 'msg', value: '{{tasks.b.outputs.result}}+{{tasks.c.outputs.result}}' }] },
  },
];

describe('dag', () => {
  it('runs a diamond in dependency order and passes task outputs', () => {
    const w = new World(dag(diamond));
    w.reconcile();
    expect(w.runningPods()).toEqual(['a']);
    w.succeedPod('a');
    w.reconcile();
    expect(w.runningPods()).toEqual(['b', 'c']);
    w.succeedPod('b', { result: 'B' });
    w.reconcile();
    expect(w.runningPods()).toEqual(['c']);
    w.succeedPod('c', { result: 'C' });
    w.reconcile();
    expect(w.created.get(w.pod('d').podName)!.template.container?.args).toEqual(['B+C']);
    // d has two parents (b and c) and is counted once.
    expect(w.status.progress).toBe('3/4');
    expect(w.node('wf').progress).toBe('3/4');
    w.succeedPod('d');
    w.reconcile();
    expect(w.status.phase).toBe('Succeeded');
    expect(w.node('wf').progress).toBe('4/4');
    // Links follow the graph.
    expect(w.node('wf').children).toEqual([w.node('a').id]);
    expect(w.node('a').children).toEqual([w.node('b').id, w.node('c').id]);
    expect(w.node('b').children).toEqual([w.node('d').id]);
    expect(w.node('c').children).toEqual([w.node('d').id]);
    expect(w.node('d')).toMatchObject({ name: 'wf.d', boundaryID: 'wf' });
  });

  it('gives each loop item the variables its arguments read, plain tags or expressions', () => {
    const w = new World(
      dag([
        { name: 'a', template: 'echo' },
        {
          name: 'plain',
          template: 'echo',
          depends: 'a',
          withItems: ['x', 'y'],
          arguments: { parameters: [{ name: 'msg', value: '{{tasks.a.outputs.result}}-{{ item }}-{{workflow.name}}' }] },
        },
        {
          name: 'expr',
          template: 'echo',
          depends: 'a',
          withItems: ['x'],
          arguments: { parameters: [{ name: 'msg', value: "{{= tasks.a.outputs.result + '/' + item }}" }] },
        },
      ]),
    );
    w.reconcile();
    w.succeedPod('a', { result: 'A' });
    w.reconcile();
    const args = (n: string) => w.created.get(w.pod(n).podName)!.template.container?.args;
    expect(args('plain(0:x)')).toEqual(['A-x-wf']);
    expect(args('plain(1:y)')).toEqual(['A-y-wf']);
    expect(args('expr(0:x)')).toEqual(['A/x']);
  });

  it('runs only the target tasks and what they need', () => {
    const w = new World(dag(diamond, { target: 'b' }));
    w.reconcile();
    w.succeedPod('a');
    w.reconcile();
    expect(w.runningPods()).toEqual(['b']);
    w.succeedPod('b');
    w.reconcile();
    expect(w.status.phase).toBe('Succeeded');
    expect(w.nodesNamed('c')).toHaveLength(0);
    expect(w.nodesNamed('d')).toHaveLength(0);
  });

  it('fails fast: after an unhandled failure no new task starts, running ones finish', () => {
    const w = new World(
      dag([
        { name: 'a', template: 'echo' },
        { name: 'slow', template: 'echo' },
        { name: 'b', template: 'echo', depends: 'a' },
        { name: 'late', template: 'echo', depends: 'slow' },
      ]),
    );
    w.reconcile();
    expect(w.runningPods()).toEqual(['a', 'slow']);
    w.failPod('a', 'broken');
    w.reconcile();
    expect(w.node('b').phase).toBe('Omitted');
    expect(w.status.phase).toBe('Running');
    expect(w.runningPods()).toEqual(['slow']);
    w.succeedPod('slow');
    w.reconcile();
    expect(w.nodesNamed('late')).toHaveLength(0);
    expect(w.status).toMatchObject({ phase: 'Failed', message: 'task "a" failed: broken' });
    expect(w.deleted).toEqual([]);
  });

  it('runs every branch it can with failFast false, then fails', () => {
    const w = new World(
      dag(
        [
          { name: 'a', template: 'echo' },
          { name: 'slow', template: 'echo' },
          { name: 'b', template: 'echo', depends: 'a' },
          { name: 'late', template: 'echo', depends: 'slow' },
        ],
        { failFast: false },
      ),
    );
    w.reconcile();
    w.failPod('a');
    w.reconcile();
    w.succeedPod('slow');
    w.reconcile();
    expect(w.runningPods()).toEqual(['late']);
    w.succeedPod('late');
    w.reconcile();
    expect(w.status.phase).toBe('Failed');
  });

  it('treats a failure handled by a dependent as expected', () => {
    const w = new World(
      dag([
        { name: 'a', template: 'echo' },
        { name: 'onFail', template: 'echo', depends: 'a.Failed' },
        { name: 'onOk', template: 'echo', depends: 'a.Succeeded' },
      ]),
    );
    w.reconcile();
    w.failPod('a');
    w.reconcile();
    expect(w.node('onOk').phase).toBe('Omitted');
    expect(w.node('onOk').message).toBe('depends "a.Succeeded" evaluated false');
    expect(w.runningPods()).toEqual(['onFail']);
    w.succeedPod('onFail');
    w.reconcile();
    expect(w.status.phase).toBe('Succeeded');
  });

  it('lets dependents run after a failure with continueOn, and the DAG succeeds', () => {
    const w = new World(
      dag([
        { name: 'a', template: 'echo', continueOn: { failed: true } },
        { name: 'b', template: 'echo', dependencies: ['a'] },
      ]),
    );
    w.reconcile();
    w.failPod('a');
    w.reconcile();
    expect(w.runningPods()).toEqual(['b']);
    w.succeedPod('b');
    w.reconcile();
    expect(w.status.phase).toBe('Succeeded');
  });

  it('skips a task whose when is false; bare depends treats Skipped as done', () => {
    const w = new World(
      dag([
        { name: 'a', template: 'echo', when: '1 == 2' },
        { name: 'b', template: 'echo', depends: 'a' },
      ]),
    );
    w.reconcile();
    expect(w.node('a')).toMatchObject({ phase: 'Skipped', type: 'Skipped' });
    expect(w.runningPods()).toEqual(['b']);
  });

  it('runs looped tasks as a TaskGroup and lets depends use AnySucceeded', () => {
    const w = new World(
      dag([
        {
          name: 'fan',
          template: 'echo',
          withItems: [{ n: 1 }, { n: 2 }],
          arguments: { parameters: [{ name: 'msg', value: 'n={{item.n}}' }] },
        },
        {
          name: 'any',
          template: 'echo',
          depends: 'fan.AnySucceeded',
          arguments: { parameters: [{ name: 'msg', value: '{{tasks.fan.outputs.result}}' }] },
        },
      ]),
    );
    w.reconcile();
    const group = w.node('fan');
    expect(group.type).toBe('TaskGroup');
    expect(w.runningPods()).toEqual(['fan(0:n:1)', 'fan(1:n:2)']);
    expect(w.node('fan(0:n:1)').name).toBe('wf.fan(0:n:1)');
    w.succeedPod('fan(0:n:1)', { result: 'one' });
    w.failPod('fan(1:n:2)');
    w.reconcile();
    expect(w.node('fan').phase).toBe('Failed');
    expect(w.created.get(w.pod('any').podName)!.template.container?.args).toEqual(['["one"]']);
    w.succeedPod('any');
    w.reconcile();
    // fan's failure is handled by `any`, which ran.
    expect(w.status.phase).toBe('Succeeded');
  });

  it('bounds running tasks with template parallelism', () => {
    const w = new World({
      entrypoint: 'main',
      templates: [
        {
          name: 'main',
          parallelism: 2,
          dag: {
            tasks: [
              { name: 'x', template: 'echo' },
              { name: 'y', template: 'echo' },
              { name: 'z', template: 'echo' },
            ],
          },
        },
        echo,
      ],
    });
    w.reconcile();
    expect(w.runningPods()).toEqual(['x', 'y']);
    w.succeedPod('y');
    w.reconcile();
    expect(w.runningPods()).toEqual(['x', 'z']);
  });

  it('exports a task output as the DAG output and as a global', () => {
    const w = new World({
      entrypoint: 'main',
      templates: [
        {
          name: 'main',
          dag: {
            tasks: [
              { name: 'a', template: 'gen' },
              {
                name: 'b',
                template: 'echo',
                depends: 'a',
                arguments: { parameters: [{ name: 'msg', value: '{{workflow.outputs.parameters.color}}' }] },
              },
            ],
          },
          outputs: { parameters: [{ name: 'out', valueFrom: { parameter: '{{tasks.a.outputs.parameters.c}}' } }] },
        },
        {
          name: 'gen',
          outputs: { parameters: [{ name: 'c', globalName: 'color', valueFrom: { path: '/tmp/c' } }] },
          container: { image: 'alpine' },
        },
        echo,
      ],
    });
    w.reconcile();
    w.succeedPod('a', { parameters: [{ name: 'c', value: 'blue' }] });
    w.reconcile();
    expect(w.created.get(w.pod('b').podName)!.template.container?.args).toEqual(['blue']);
    w.succeedPod('b');
    w.reconcile();
    expect(w.status.phase).toBe('Succeeded');
    expect(w.status.outputs?.parameters).toEqual([{ name: 'color', value: 'blue' }]);
    expect(w.node('wf').outputs?.parameters).toEqual([{ name: 'out', value: 'blue' }]);
  });

  it('fails at once on a cycle, naming the template', () => {
    const w = new World(
      dag([
        { name: 'a', template: 'echo', depends: 'b' },
        { name: 'b', template: 'echo', depends: 'a' },
      ]),
    );
    w.reconcile();
    expect(w.status.phase).toBe('Failed');
    expect(w.status.message).toContain('spec.templates[main].dag.tasks have a dependency cycle: a → b → a');
    expect(w.created.size).toBe(0);
  });
});
