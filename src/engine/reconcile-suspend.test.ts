import { describe, expect, it } from 'vitest';
import type { Template, WorkflowSpec } from '../api/index.js';
import { resumeWorkflow, ResumeError } from './resume.js';
import { World } from './test-world.js';

const echo: Template = {
  name: 'echo',
  inputs: { parameters: [{ name: 'msg', default: 'hi' }] },
  container: { image: 'alpine', args: ['{{inputs.parameters.msg}}'] },
};

function withSuspend(suspend: Template): WorkflowSpec {
  return {
    entrypoint: 'main',
    templates: [
      {
        name: 'main',
        steps: [
          [{ name: 'wait', template: suspend.name }],
          [
            {
              name: 'after',
              template: 'echo',
              arguments: { parameters: [{ name: 'msg', value: '{{steps.wait.outputs.parameters.answer}}' }] },
            },
          ],
        ],
      },
      suspend,
      echo,
    ],
  };
}

describe('suspend', () => {
  it('resumes by itself after its duration and asks to be requeued then', () => {
    const w = new World(
      withSuspend({
        name: 'pause',
        suspend: { duration: '2m' },
        outputs: { parameters: [{ name: 'answer', valueFrom: { supplied: {}, default: 'timeout' } }] },
      }),
    );
    w.reconcile();
    expect(w.node('wait')).toMatchObject({ type: 'Suspend', phase: 'Running' });
    expect(w.requeueAt).toBe('2024-01-01T00:02:00.000Z');
    w.advance(119);
    w.reconcile();
    expect(w.node('wait').phase).toBe('Running');
    w.advance(1);
    w.reconcile();
    expect(w.node('wait')).toMatchObject({ phase: 'Succeeded', outputs: { parameters: [{ name: 'answer', value: 'timeout' }] } });
    expect(w.created.get(w.pod('after').podName)!.template.container?.args).toEqual(['timeout']);
  });

  it('waits for a resume, which supplies output parameters', () => {
    const w = new World(
      withSuspend({
        name: 'approve',
        suspend: {},
        outputs: { parameters: [{ name: 'answer', enum: ['yes', 'no'], valueFrom: { supplied: {} } }] },
      }),
    );
    w.reconcile();
    w.advance(3600);
    w.reconcile();
    expect(w.node('wait').phase).toBe('Running');
    expect(w.requeueAt).toBeUndefined();

    expect(() => resumeWorkflow(w.status, { now: '2024-01-01T01:00:00Z' })).toThrow(ResumeError);
    expect(() => resumeWorkflow(w.status, { now: '2024-01-01T01:00:00Z', parameters: { answer: 'maybe' } })).toThrow(
      /not one of the allowed values/,
    );
    const { status, resumed } = resumeWorkflow(w.status, { now: '2024-01-01T01:00:00Z', parameters: { answer: 'yes' } });
    expect(resumed).toEqual(['wf[0].wait']);
    w.workflow.status = status;
    w.reconcile();
    expect(w.node('wait')).toMatchObject({ phase: 'Succeeded', message: 'resumed', finishedAt: '2024-01-01T01:00:00Z' });
    expect(w.created.get(w.pod('after').podName)!.template.container?.args).toEqual(['yes']);
  });

  it('resumes only the named node', () => {
    const w = new World({
      entrypoint: 'main',
      templates: [
        {
          name: 'main',
          steps: [
            [
              { name: 'one', template: 'hold' },
              { name: 'two', template: 'hold' },
            ],
          ],
        },
        { name: 'hold', suspend: {} },
      ],
    });
    w.reconcile();
    const { status, resumed } = resumeWorkflow(w.status, { now: '2024-01-01T00:00:10Z', node: 'two' });
    expect(resumed).toEqual(['wf[0].two']);
    w.workflow.status = status;
    w.reconcile();
    expect(w.node('one').phase).toBe('Running');
    expect(w.node('two').phase).toBe('Succeeded');
    expect(w.status.phase).toBe('Running');
    w.workflow.status = resumeWorkflow(w.status, { now: '2024-01-01T00:00:20Z' }).status;
    w.reconcile();
    expect(w.status.phase).toBe('Succeeded');
  });

  it('fails a suspend node when the workflow deadline passes', () => {
    const w = new World({ ...withSuspend({ name: 'hold', suspend: {} }), activeDeadlineSeconds: 60 });
    w.reconcile();
    expect(w.requeueAt).toBe('2024-01-01T00:01:00.000Z');
    w.advance(60);
    w.reconcile();
    expect(w.node('wait').phase).toBe('Failed');
    expect(w.status.phase).toBe('Failed');
  });
});
