import { describe, expect, it } from 'vitest';
import type { Template, Workflow, WorkflowSpec } from '../api/index.js';
import { World } from './test-world.js';
import { validateWorkflow } from './validate.js';

const echo: Template = { name: 'echo', container: { image: 'alpine', command: ['echo', 'hi'] } };
const notify: Template = {
  name: 'notify',
  inputs: { parameters: [{ name: 'msg', default: 'ping' }] },
  container: { image: 'alpine', command: ['echo', '{{inputs.parameters.msg}}'] },
};

function messages(spec: WorkflowSpec): string[] {
  const wf: Workflow = { metadata: { name: 'wf', namespace: 'ns' }, spec };
  return validateWorkflow(wf).map((e) => e.message);
}

describe('lifecycle hooks of a step', () => {
  const spec = (): WorkflowSpec => ({
    entrypoint: 'main',
    templates: [
      {
        name: 'main',
        steps: [
          [
            {
              name: 'build',
              template: 'echo',
              hooks: {
                running: {
                  expression: 'steps.build.status == "Running"',
                  template: 'notify',
                  arguments: { parameters: [{ name: 'msg', value: 'started' }] },
                },
                failed: { expression: 'steps["build"].status == "Failed"', template: 'notify' },
                exit: { template: 'notify', arguments: { parameters: [{ name: 'msg', value: 'exit {{steps.build.status}}' }] } },
              },
            },
          ],
          [{ name: 'after', template: 'echo' }],
        ],
      },
      echo,
      notify,
    ],
  });

  it('starts a hook once its expression holds, once, as a child of the step; the next group waits for it', () => {
    const w = new World(spec());
    w.reconcile();
    expect(w.nodesNamed('build.hooks.running')).toEqual([]);
    w.startPod('build');
    w.reconcile();
    const hook = w.node('build.hooks.running');
    expect(hook).toMatchObject({ name: 'wf[0].build.hooks.running', type: 'Pod', phase: 'Pending' });
    expect(w.node('build').children).toContain(hook.id);
    expect(w.created.get(w.pod('build.hooks.running').podName)!.template.container?.command).toEqual(['echo', 'started']);
    // The step ends before its hook: the exit hook and the next group wait for the running hook.
    w.succeedPod('build');
    w.reconcile();
    expect(w.nodesNamed('build.onExit')).toEqual([]);
    expect(w.nodesNamed('after')).toEqual([]);
    expect(w.nodesNamed('build.hooks.failed')).toEqual([]);
    w.succeedPod('build.hooks.running');
    w.reconcile();
    expect(w.created.get(w.pod('build.onExit').podName)!.template.container?.command).toEqual(['echo', 'exit Succeeded']);
    w.succeedPod('build.onExit');
    w.reconcile();
    w.succeedPod('after');
    w.reconcile();
    expect(w.status.phase).toBe('Succeeded');
    expect(w.nodesNamed('build.hooks.running')).toHaveLength(1);
  });

  it('runs the hook of the outcome that happened; a Failed hook does not change the result', () => {
    const w = new World(spec());
    w.reconcile();
    w.failPod('build', 'boom');
    w.reconcile();
    expect(w.nodesNamed('build.hooks.running')).toEqual([]);
    w.failPod('build.hooks.failed', 'notify broke');
    w.reconcile();
    w.succeedPod('build.onExit');
    w.reconcile();
    expect(w.status).toMatchObject({ phase: 'Failed', message: 'step "build" failed: boom' });
  });

  it('a hook in Error fails the steps template even under continueOn', () => {
    const s = spec();
    const step = s.templates![0]!.steps![0]![0]!;
    step.continueOn = { failed: true };
    step.hooks = {
      failed: {
        expression: 'steps.build.status == "Failed"',
        template: 'notify',
        arguments: { parameters: [{ name: 'msg', value: '{{steps.nope.outputs.result}}' }] },
      },
    };
    const w = new World(s);
    w.reconcile();
    w.failPod('build');
    w.reconcile();
    expect(w.node('build.hooks.failed')).toMatchObject({ phase: 'Error' });
    expect(w.status.phase).toBe('Error');
    expect(w.status.message).toMatch(/step "build.hooks.failed" errored: .*steps\.nope\.outputs\.result/);
    expect(w.nodesNamed('after')).toEqual([]);
  });

  it('runs the hooks of each item of a looped step', () => {
    const w = new World({
      entrypoint: 'main',
      templates: [
        {
          name: 'main',
          steps: [
            [
              {
                name: 'each',
                template: 'echo',
                withItems: ['a', 'b'],
                hooks: {
                  done: {
                    expression: 'steps.each.status == "Succeeded"',
                    template: 'notify',
                    arguments: { parameters: [{ name: 'msg', value: '{{item}}' }] },
                  },
                },
              },
            ],
          ],
        },
        echo,
        notify,
      ],
    });
    w.reconcile();
    w.succeedPod('each(0:a)');
    w.reconcile();
    expect(w.nodesNamed('each(0:a).hooks.done')).toHaveLength(1);
    expect(w.nodesNamed('each(1:b).hooks.done')).toEqual([]);
    w.succeedAll();
    w.reconcile();
    w.succeedAll();
    w.reconcile();
    expect(w.created.get(w.pod('each(1:b).hooks.done').podName)!.template.container?.command).toEqual(['echo', 'b']);
    expect(w.status.phase).toBe('Succeeded');
  });
});

describe('lifecycle hooks of a DAG task', () => {
  it('runs a task hook while the task runs; dependents wait for it', () => {
    const w = new World({
      entrypoint: 'main',
      templates: [
        {
          name: 'main',
          dag: {
            tasks: [
              { name: 'a', template: 'echo', hooks: { running: { expression: 'tasks.a.status == "Running"', template: 'notify' } } },
              { name: 'b', template: 'echo', depends: 'a' },
            ],
          },
        },
        echo,
        notify,
      ],
    });
    w.reconcile();
    w.startPod('a');
    w.reconcile();
    expect(w.node('a.hooks.running')).toMatchObject({ name: 'wf.a.hooks.running' });
    w.succeedPod('a');
    w.reconcile();
    expect(w.nodesNamed('b')).toEqual([]);
    w.succeedPod('a.hooks.running');
    w.reconcile();
    w.succeedPod('b');
    w.reconcile();
    expect(w.status.phase).toBe('Succeeded');
  });
});

describe('lifecycle hooks of the workflow', () => {
  const spec = (): WorkflowSpec => ({
    entrypoint: 'main',
    hooks: {
      running: {
        expression: 'workflow.status == "Running"',
        template: 'notify',
        arguments: { parameters: [{ name: 'msg', value: '{{workflow.name}} runs' }] },
      },
      succeeded: { expression: 'workflow.status == "Succeeded"', template: 'notify' },
      exit: { template: 'notify', arguments: { parameters: [{ name: 'msg', value: 'bye' }] } },
    },
    templates: [{ name: 'main', steps: [[{ name: 'a', template: 'echo' }]] }, echo, notify],
  });

  it('runs the running hook at once and the succeeded hook at the end, before the exit handler', () => {
    const w = new World(spec());
    w.reconcile();
    expect(w.node('wf.hooks.running')).toMatchObject({ phase: 'Pending' });
    expect(w.created.get(w.pod('wf.hooks.running').podName)!.template.container?.command).toEqual(['echo', 'wf runs']);
    w.succeedAll();
    w.reconcile();
    expect(w.node('wf.hooks.succeeded')).toMatchObject({ phase: 'Pending' });
    expect(w.nodesNamed('onExit')).toEqual([]);
    w.succeedPod('wf.hooks.succeeded');
    w.reconcile();
    w.succeedPod('onExit');
    w.reconcile();
    expect(w.status.phase).toBe('Succeeded');
    expect(w.nodesNamed('wf.hooks.running')).toHaveLength(1);
  });

  it('a workflow-level hook in Error fails the workflow naming it', () => {
    const s = spec();
    s.hooks = {
      running: {
        expression: 'workflow.status == "Running"',
        template: 'notify',
        arguments: { parameters: [{ name: 'msg', value: '{{steps.zzz.status}}' }] },
      },
    };
    const w = new World(s);
    w.reconcile();
    w.succeedAll();
    w.reconcile();
    expect(w.status.phase).toBe('Failed');
    expect(w.node('wf.hooks.running')).toMatchObject({ phase: 'Error', message: expect.stringContaining('spec.hooks.running.arguments') });
    expect(w.status.message).toMatch(/^hook "wf.hooks.running" errored: spec\.hooks\.running\.arguments/);
  });

  it('starts no hook after Terminate', () => {
    const w = new World({ ...spec(), shutdown: 'Terminate' });
    w.reconcile();
    expect(w.nodesNamed('wf.hooks.running')).toEqual([]);
  });
});

describe('validating hooks', () => {
  const base = (hooks: WorkflowSpec['hooks']): WorkflowSpec => ({
    entrypoint: 'main',
    hooks,
    templates: [{ name: 'main', steps: [[{ name: 'a', template: 'echo', hooks }]] }, echo, notify],
  });

  it('needs an expression on every hook but exit, and none on exit', () => {
    expect(messages(base({ failed: { template: 'notify' } })).sort()).toEqual([
      expect.stringMatching(/^spec\.hooks\.failed needs an expression/),
      expect.stringMatching(/^spec\.templates\[main\]\.steps\[0\]\[a\]\.hooks\.failed needs an expression/),
    ]);
    expect(messages(base({ exit: { template: 'notify', expression: 'true' } })).sort()).toEqual([
      expect.stringMatching(/^spec\.hooks\.exit\.expression is not read on the exit hook/),
      expect.stringMatching(/^spec\.templates\[main\]\.steps\[0\]\[a\]\.hooks\.exit\.expression is not read/),
    ]);
  });

  it('refuses a malformed expression and a missing template, naming the hook', () => {
    const errs = messages(base({ running: { expression: 'steps.a.status ==', template: 'nope' } }));
    expect(errs).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^spec\.hooks\.running\.expression is not a valid expression/),
        expect.stringMatching(/^spec\.hooks\.running .*nope/),
        expect.stringMatching(/^spec\.templates\[main\]\.steps\[0\]\[a\]\.hooks\.running\.expression is not a valid expression/),
      ]),
    );
  });

  it('accepts the peer example shapes', () => {
    expect(
      messages(base({ running: { expression: 'steps["a"].status == "Running"', template: 'notify' }, exit: { template: 'notify' } })),
    ).toEqual([]);
  });
});
