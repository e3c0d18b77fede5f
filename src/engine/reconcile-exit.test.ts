import { describe, expect, it } from 'vitest';
import type { Template, WorkflowSpec } from '../api/index.js';
import { World } from './test-world.js';

const echo: Template = {
  name: 'echo',
  inputs: { parameters: [{ name: 'msg', default: 'hi' }] },
  container: { image: 'alpine', args: ['{{inputs.parameters.msg}}'] },
};
const report: Template = {
  name: 'report',
  container: { image: 'alpine', args: ['{{workflow.status}}', '{{workflow.failures}}'] },
};

function withExit(extra: Partial<WorkflowSpec> = {}): WorkflowSpec {
  return {
    entrypoint: 'main',
    onExit: 'report',
    templates: [{ name: 'main', steps: [[{ name: 'a', template: 'echo' }]] }, echo, report],
    ...extra,
  };
}

describe('exit handlers and hooks', () => {
  it('runs the exit handler after a failure, with workflow.status and failures, and stays Failed', () => {
    const w = new World(withExit());
    w.reconcile();
    w.failPod('a', 'boom');
    w.reconcile();
    const exit = w.node('onExit');
    expect(exit).toMatchObject({ name: 'wf.onExit', type: 'Pod' });
    expect(w.status.phase).toBe('Running');
    const args = w.created.get(w.pod('onExit').podName)!.template.container?.args ?? [];
    expect(args[0]).toBe('Failed');
    expect(JSON.parse(args[1]!)).toEqual([
      {
        displayName: 'a',
        message: 'boom',
        templateName: 'echo',
        phase: 'Failed',
        podName: w.node('a').podName,
        finishedAt: '2024-01-01T00:00:00.000Z',
      },
    ]);
    w.succeedPod('onExit');
    w.reconcile();
    expect(w.status).toMatchObject({ phase: 'Failed', message: 'step "a" failed: boom' });
  });

  it('runs the exit handler after success and fails the workflow if it fails', () => {
    const w = new World(withExit());
    w.reconcile();
    w.succeedPod('a');
    w.reconcile();
    expect(w.created.get(w.pod('onExit').podName)!.template.container?.args?.[0]).toBe('Succeeded');
    w.failPod('onExit', 'cleanup broke');
    w.reconcile();
    expect(w.status).toMatchObject({ phase: 'Failed', message: 'exit handler failed: cleanup broke' });
  });

  it('accepts spec.hooks.exit with arguments', () => {
    const w = new World({
      entrypoint: 'main',
      hooks: { exit: { template: 'echo', arguments: { parameters: [{ name: 'msg', value: 'done: {{workflow.status}}' }] } } },
      templates: [{ name: 'main', steps: [[{ name: 'a', template: 'echo' }]] }, echo],
    });
    w.reconcile();
    w.succeedPod('a');
    w.reconcile();
    expect(w.created.get(w.pod('onExit').podName)!.template.container?.args).toEqual(['done: Succeeded']);
    w.succeedPod('onExit');
    w.reconcile();
    expect(w.status.phase).toBe('Succeeded');
  });

  it('runs the exit handler after the deadline, which does not stop it', () => {
    const w = new World(withExit({ activeDeadlineSeconds: 10 }));
    w.reconcile();
    w.advance(10);
    w.reconcile();
    expect(w.node('a').phase).toBe('Failed');
    expect(w.runningPods()).toEqual(['onExit']);
    w.advance(100);
    w.reconcile();
    expect(w.runningPods()).toEqual(['onExit']);
    w.succeedPod('onExit');
    w.reconcile();
    expect(w.status.phase).toBe('Failed');
    expect(w.status.message).toMatch(/deadline/);
  });

  it('runs a step exit hook before the next group, with the step results', () => {
    const w = new World({
      entrypoint: 'main',
      templates: [
        {
          name: 'main',
          steps: [
            [
              {
                name: 'a',
                template: 'echo',
                continueOn: { failed: true },
                hooks: { exit: { template: 'echo', arguments: { parameters: [{ name: 'msg', value: 'a was {{steps.a.status}}' }] } } },
              },
            ],
            [{ name: 'b', template: 'echo' }],
          ],
        },
        echo,
      ],
    });
    w.reconcile();
    w.failPod('a');
    w.reconcile();
    const hook = w.node('a.onExit');
    expect(hook.name).toBe('wf[0].a.onExit');
    expect(w.node('a').children).toEqual([hook.id]);
    expect(w.created.get(w.pod('a.onExit').podName)!.template.container?.args).toEqual(['a was Failed']);
    expect(w.nodesNamed('b')).toHaveLength(0);
    w.succeedPod('a.onExit');
    w.reconcile();
    expect(w.runningPods()).toEqual(['b']);
  });

  it('runs a DAG task exit hook (deprecated onExit form) before dependents', () => {
    const w = new World({
      entrypoint: 'main',
      templates: [
        {
          name: 'main',
          dag: {
            tasks: [
              { name: 'a', template: 'echo', onExit: 'echo' },
              { name: 'b', template: 'echo', depends: 'a' },
            ],
          },
        },
        echo,
      ],
    });
    w.reconcile();
    w.succeedPod('a');
    w.reconcile();
    expect(w.runningPods()).toEqual(['a.onExit']);
    w.failPod('a.onExit');
    w.reconcile();
    // The hook's failure is visible on its node but does not change the task's outcome.
    expect(w.node('a').phase).toBe('Succeeded');
    expect(w.runningPods()).toEqual(['b']);
  });
});
