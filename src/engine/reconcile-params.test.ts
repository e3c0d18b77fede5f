import { describe, expect, it } from 'vitest';
import type { Template } from '../api/index.js';
import { World } from './test-world.js';

const show: Template = {
  name: 'show',
  inputs: { parameters: [{ name: 'x' }, { name: 'mode', default: 'fast', enum: ['fast', 'slow'] }] },
  container: { image: 'alpine', args: ['{{inputs.parameters.x}}', '{{inputs.parameters.mode}}'] },
};

function argsOf(w: World, name: string): string[] | undefined {
  return w.created.get(w.pod(name).podName)!.template.container?.args;
}

describe('parameters and variables', () => {
  it('binds workflow arguments to the entrypoint inputs, with defaults', () => {
    const w = new World({ entrypoint: 'show', arguments: { parameters: [{ name: 'x', value: 7 }] }, templates: [show] });
    w.reconcile();
    expect(argsOf(w, 'wf')).toEqual(['7', 'fast']);
    expect(w.node('wf').inputs?.parameters).toEqual([
      { name: 'x', value: '7' },
      { name: 'mode', value: 'fast' },
    ]);
  });

  it('fails at once when a required workflow parameter is missing', () => {
    const w = new World({ entrypoint: 'show', templates: [show] });
    w.reconcile();
    expect(w.status.phase).toBe('Failed');
    expect(w.status.message).toContain('spec.arguments.parameters is missing "x", which the entrypoint template "show" requires');
    expect(w.created.size).toBe(0);
  });

  it('fails at once on a workflow argument outside the enum', () => {
    const w = new World({
      entrypoint: 'show',
      arguments: {
        parameters: [
          { name: 'x', value: '1' },
          { name: 'mode', value: 'medium' },
        ],
      },
      templates: [show],
    });
    w.reconcile();
    expect(w.status).toMatchObject({ phase: 'Failed' });
    expect(w.status.message).toContain('spec.arguments.parameters[mode] value "medium" is not one of the allowed values ["fast","slow"]');
  });

  it('errors a step at run time when a computed argument is outside the enum', () => {
    const w = new World({
      entrypoint: 'main',
      templates: [
        {
          name: 'main',
          steps: [
            [{ name: 'gen', template: 'gen' }],
            [
              {
                name: 'use',
                template: 'show',
                arguments: {
                  parameters: [
                    { name: 'x', value: '1' },
                    { name: 'mode', value: '{{steps.gen.outputs.result}}' },
                  ],
                },
              },
            ],
          ],
        },
        { name: 'gen', script: { image: 'python', source: 'print("turbo")' } },
        show,
      ],
    });
    w.reconcile();
    w.succeedPod('gen', { result: 'turbo' });
    w.reconcile();
    expect(w.node('use')).toMatchObject({
      phase: 'Error',
      message: 'spec.templates[show].inputs.parameters[mode]: value "turbo" is not one of the allowed values ["fast","slow"]',
    });
    expect(w.status.phase).toBe('Error');
  });

  it('offers workflow variables and expression tags', () => {
    const w = new World({
      entrypoint: 'main',
      arguments: { parameters: [{ name: 'n', value: '4' }] },
      templates: [
        {
          name: 'main',
          container: {
            image: 'alpine',
            args: [
              '{{workflow.name}}',
              '{{workflow.namespace}}',
              '{{workflow.uid}}',
              '{{workflow.parameters.n}}',
              '{{=asInt(workflow.parameters.n) * 2}}',
              '{{pod.name}}',
              '{{unknown.thing}}',
            ],
          },
        },
      ],
    });
    w.reconcile();
    expect(argsOf(w, 'wf')).toEqual(['wf', 'ns', 'uid-1', '4', '8', w.pod('wf').podName, '{{unknown.thing}}']);
  });

  it('errors a node whose expression tag cannot be evaluated', () => {
    const w = new World({
      entrypoint: 'main',
      templates: [{ name: 'main', container: { image: 'alpine', args: ['{{=workflow.parameters.missing + 1}}'] } }],
    });
    w.reconcile();
    expect(w.node('wf').phase).toBe('Error');
    // `workflow.parameters` is a map (it holds `json`), so the missing member is nil.
    expect(w.node('wf').message).toMatch(/^spec\.templates\[main\]\.container\.args\[0\]: invalid operation: nil \+ int/);
  });

  it('collects outputs from valueFrom.path, falls back to default, fails without one', () => {
    const tmpl = (name: string, withDefault: boolean): Template => ({
      name,
      container: { image: 'alpine' },
      outputs: { parameters: [{ name: 'p', valueFrom: { path: '/tmp/p', ...(withDefault ? { default: 'dflt' } : {}) } }] },
    });
    const ok = new World({ entrypoint: 'a', templates: [tmpl('a', true)] });
    ok.reconcile();
    ok.succeedPod('wf');
    ok.reconcile();
    expect(ok.node('wf').outputs?.parameters).toEqual([{ name: 'p', value: 'dflt' }]);
    expect(ok.status.phase).toBe('Succeeded');

    const bad = new World({ entrypoint: 'a', templates: [tmpl('a', false)] });
    bad.reconcile();
    bad.succeedPod('wf');
    bad.reconcile();
    expect(bad.node('wf')).toMatchObject({
      phase: 'Error',
      message: 'spec.templates[a].outputs.parameters[p]: the pod produced no value at path "/tmp/p" and there is no default',
    });
  });

  it('passes the item and its fields through withItems and withSequence', () => {
    const w = new World({
      entrypoint: 'main',
      templates: [
        {
          name: 'main',
          steps: [
            [
              {
                name: 'objs',
                template: 'show',
                withItems: [{ x: 'a', mode: 'slow' }],
                arguments: {
                  parameters: [
                    { name: 'x', value: '{{item.x}}' },
                    { name: 'mode', value: '{{item.mode}}' },
                  ],
                },
              },
              {
                name: 'nums',
                template: 'show',
                withSequence: { start: '1', end: '2', format: 'n%02d' },
                arguments: { parameters: [{ name: 'x', value: '{{item}}' }] },
              },
            ],
          ],
        },
        show,
      ],
    });
    w.reconcile();
    expect(w.runningPods()).toEqual(['nums(0:n01)', 'nums(1:n02)', 'objs(0:mode:slow,x:a)']);
    expect(argsOf(w, 'objs(0:mode:slow,x:a)')).toEqual(['a', 'slow']);
    expect(argsOf(w, 'nums(1:n02)')).toEqual(['n02', 'fast']);
  });
});

describe('parameter values that are not AnyString', () => {
  it('fails the workflow at once naming the field, instead of throwing (fuzz fz-w-144)', () => {
    const w = new World({
      entrypoint: 'main',
      templates: [
        {
          name: 'main',
          steps: [
            [{ name: 'first', template: 'say', arguments: { parameters: [{ name: 'msg', value: 'a' }] } }],
            [
              { name: 'second', template: 'say', arguments: { parameters: [{ name: 'msg', value: 'b' }] } },
              { name: 'third', template: 'say', arguments: { parameters: [{ name: 'msg', value: ['x'] as never }] } },
            ],
          ],
        },
        { name: 'say', inputs: { parameters: [{ name: 'msg' }] }, container: { image: 'alpine', args: ['{{inputs.parameters.msg}}'] } },
      ],
    });
    w.workflow.apiVersion = '';
    const r = w.reconcile();
    expect(r.status.phase).toBe('Failed');
    expect(r.status.message).toBe(
      'invalid spec: spec.templates[main].steps[1][third].arguments.parameters[msg].value must be a string, number or boolean, got a list',
    );
    expect(r.actions).toEqual([]);
  });
});
