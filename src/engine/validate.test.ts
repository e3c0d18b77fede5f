import { describe, expect, it } from 'vitest';
import type { Template, Workflow, WorkflowSpec } from '../api/index.js';
import { validateWorkflow } from './validate.js';

const echo: Template = {
  name: 'echo',
  inputs: { parameters: [{ name: 'msg' }] },
  container: { image: 'alpine', args: ['{{inputs.parameters.msg}}'] },
};
const plain: Template = { name: 'plain', container: { image: 'alpine' } };

function wf(spec: WorkflowSpec): Workflow {
  return { metadata: { name: 'wf', namespace: 'ns' }, spec };
}

function messages(spec: WorkflowSpec, sources?: Parameters<typeof validateWorkflow>[1]): string[] {
  return validateWorkflow(wf(spec), sources).map((e) => e.message);
}

describe('validateWorkflow', () => {
  it("refuses artifact names that could become paths (the peer's rule: letters, digits, '_' and '-')", () => {
    const got = messages({
      entrypoint: 'main',
      arguments: { artifacts: [{ name: '../../etc', raw: { data: 'x' } }] },
      templates: [
        {
          name: 'main',
          inputs: {
            artifacts: [
              { name: 'ok_name-1', path: '/tmp/a' },
              { name: 'a/../../b', path: '/tmp/b' },
            ],
          },
          outputs: {
            artifacts: [
              { name: '', path: '/tmp/c' },
              { name: '.', path: '/tmp/d' },
            ],
          },
          container: { image: 'alpine' },
        },
      ],
    });
    expect(got).toEqual(
      expect.arrayContaining([
        `spec.arguments.artifacts[0].name "../../etc" may hold only letters, digits, '_' and '-' (e.g. my_artifact-1)`,
        `spec.templates[main].inputs.artifacts[1].name "a/../../b" may hold only letters, digits, '_' and '-' (e.g. my_artifact-1)`,
        'spec.templates[main].outputs.artifacts[0].name is required',
        `spec.templates[main].outputs.artifacts[1].name "." may hold only letters, digits, '_' and '-' (e.g. my_artifact-1)`,
      ]),
    );
    expect(got.some((m) => m.includes('ok_name-1'))).toBe(false);
  });

  it('accepts a sound workflow', () => {
    expect(
      messages({
        entrypoint: 'main',
        arguments: { parameters: [{ name: 'm', value: 'x' }] },
        templates: [
          {
            name: 'main',
            inputs: { parameters: [{ name: 'm' }] },
            dag: {
              tasks: [
                { name: 'a', template: 'echo', arguments: { parameters: [{ name: 'msg', value: '{{inputs.parameters.m}}' }] } },
                {
                  name: 'b',
                  template: 'echo',
                  depends: 'a.Succeeded || a.Failed',
                  arguments: { parameters: [{ name: 'msg', value: '{{tasks.a.outputs.result}}' }] },
                },
              ],
            },
          },
          echo,
        ],
      }),
    ).toEqual([]);
  });

  it('names unknown templates and the entrypoint', () => {
    expect(messages({ templates: [plain] })).toEqual(['spec.entrypoint is required']);
    expect(messages({ entrypoint: 'nope', templates: [plain] })).toEqual(['spec.entrypoint names template "nope", which does not exist']);
    expect(messages({ entrypoint: 'main', templates: [{ name: 'main', steps: [[{ name: 's', template: 'ghost' }]] }] })).toEqual([
      'spec.templates[main].steps[0][s].template names template "ghost", which does not exist',
    ]);
    expect(messages({ entrypoint: 'plain', onExit: 'gone', templates: [plain] })).toEqual([
      'spec.onExit names template "gone", which does not exist',
    ]);
  });

  it('names missing parameters and bad enum values', () => {
    expect(messages({ entrypoint: 'main', templates: [{ name: 'main', steps: [[{ name: 's', template: 'echo' }]] }, echo] })).toEqual([
      'spec.templates[main].steps[0][s].arguments.parameters is missing "msg", which template "echo" requires (it has no default)',
    ]);
    const pick: Template = { name: 'pick', inputs: { parameters: [{ name: 'c', enum: ['red', 'blue'] }] }, container: { image: 'a' } };
    expect(
      messages({
        entrypoint: 'main',
        templates: [
          { name: 'main', dag: { tasks: [{ name: 't', template: 'pick', arguments: { parameters: [{ name: 'c', value: 'green' }] } }] } },
          pick,
        ],
      }),
    ).toEqual(['spec.templates[main].dag.tasks[t].arguments.parameters[c] value "green" is not one of the allowed values ["red","blue"]']);
    expect(messages({ entrypoint: 'plain', arguments: { parameters: [{ name: 'p' }] }, templates: [plain] })).toEqual([
      'spec.arguments.parameters[p].value is required',
    ]);
  });

  it('finds cycles, unknown dependencies and bad depends', () => {
    const dag = (tasks: NonNullable<Template['dag']>['tasks']): WorkflowSpec => ({
      entrypoint: 'main',
      templates: [{ name: 'main', dag: { tasks } }, plain],
    });
    expect(messages(dag([{ name: 'b', template: 'plain', depends: 'c' }]))).toEqual([
      'spec.templates[main].dag.tasks[b].depends names an unknown task "c"',
    ]);
    expect(messages(dag([{ name: 'b', template: 'plain', dependencies: ['c'] }]))).toEqual([
      'spec.templates[main].dag.tasks[b].dependencies names an unknown task "c"',
    ]);
    expect(
      messages(
        dag([
          { name: 'a', template: 'plain', dependencies: ['c'] },
          { name: 'b', template: 'plain', dependencies: ['a'] },
          { name: 'c', template: 'plain', depends: 'b' },
        ]),
      ),
    ).toEqual(['spec.templates[main].dag.tasks have a dependency cycle: a → c → b → a']);
    const [bad] = messages(
      dag([
        { name: 'a', template: 'plain' },
        { name: 'b', template: 'plain', depends: 'a &&' },
      ]),
    );
    expect(bad).toMatch(/^spec\.templates\[main\]\.dag\.tasks\[b\]\.depends expected a task name/);
    expect(messages(dag([{ name: 'a', template: 'plain', dependencies: ['a'], depends: 'a' }]))[0]).toBe(
      'spec.templates[main].dag.tasks[a] has both dependencies and depends; use one',
    );
    expect(
      messages({
        entrypoint: 'main',
        templates: [{ name: 'main', dag: { target: 'zz', tasks: [{ name: 'a', template: 'plain' }] } }, plain],
      }),
    ).toEqual(['spec.templates[main].dag.target names an unknown task "zz"']);
  });

  it('finds malformed expressions and tags', () => {
    const [when] = messages({
      entrypoint: 'main',
      templates: [{ name: 'main', steps: [[{ name: 's', template: 'plain', when: '{{=1 +}} == 2' }]] }, plain],
    });
    expect(when).toMatch(/^spec\.templates\[main\]\.steps\[0\]\[s\]\.when has a malformed tag/);
    const [cond] = messages({
      entrypoint: 'main',
      templates: [{ name: 'main', steps: [[{ name: 's', template: 'plain', when: 'a == (b' }]] }, plain],
    });
    expect(cond).toMatch(/^spec\.templates\[main\]\.steps\[0\]\[s\]\.when is not a valid condition/);
    const [retry] = messages({ entrypoint: 'plain', templates: [{ ...plain, retryStrategy: { expression: 'lastRetry.status ==' } }] });
    expect(retry).toMatch(/^spec\.templates\[plain\]\.retryStrategy\.expression is not a valid expression/);
    const [unclosed] = messages({
      entrypoint: 'plain',
      templates: [{ ...plain, container: { image: 'a', args: ['{{inputs.parameters.x'] } }],
    });
    expect(unclosed).toMatch(/^spec\.templates\[plain\]\.container\.args\[0\] has a malformed tag: unclosed/);
  });

  it('checks references to inputs, steps and tasks', () => {
    expect(
      messages({ entrypoint: 'plain', templates: [{ ...plain, container: { image: 'a', args: ['{{inputs.parameters.nope}}'] } }] }),
    ).toEqual([
      'spec.templates[plain].container.args[0] refers to {{inputs.parameters.nope}} but the template declares no input parameter "nope"',
    ]);
    expect(
      messages({
        entrypoint: 'main',
        templates: [
          {
            name: 'main',
            steps: [
              [
                { name: 'a', template: 'echo', arguments: { parameters: [{ name: 'msg', value: '{{steps.b.outputs.result}}' }] } },
                { name: 'b', template: 'plain' },
              ],
            ],
          },
          echo,
          plain,
        ],
      }),
    ).toEqual([
      'spec.templates[main].steps[0][a].arguments.parameters[0].value refers to {{steps.b.outputs.result}} but step "b" does not run before this one (only steps of earlier groups can be used)',
    ]);
    expect(
      messages({
        entrypoint: 'main',
        templates: [
          {
            name: 'main',
            dag: {
              tasks: [
                { name: 'a', template: 'plain' },
                { name: 'b', template: 'echo', arguments: { parameters: [{ name: 'msg', value: '{{tasks.a.outputs.result}}' }] } },
              ],
            },
          },
          echo,
          plain,
        ],
      }),
    ).toEqual([
      'spec.templates[main].dag.tasks[b].arguments.parameters[0].value refers to {{tasks.a.outputs.result}} but task "a" is not among the tasks "b" depends on',
    ]);
    expect(
      messages({
        entrypoint: 'main',
        templates: [{ name: 'main', steps: [[{ name: 'a', template: 'plain', when: '{{steps.zz.outputs.result}} == 1' }]] }, plain],
      }),
    ).toEqual(['spec.templates[main].steps[0][a].when refers to {{steps.zz.outputs.result}} but there is no step "zz"']);
    expect(
      messages({
        entrypoint: 'main',
        templates: [
          { name: 'main', steps: [[{ name: 'a', template: 'echo', arguments: { parameters: [{ name: 'msg', value: '{{item}}' }] } }]] },
          echo,
        ],
      }),
    ).toEqual([
      'spec.templates[main].steps[0][a].arguments.parameters[0].value uses {{item}} but the step has no withItems, withParam or withSequence',
    ]);
  });

  it('checks numbers, durations, kinds and policies', () => {
    expect(
      messages({
        entrypoint: 'plain',
        parallelism: 0,
        templates: [
          { ...plain, timeout: '10 minutes', retryStrategy: { limit: -1, retryPolicy: 'Sometimes', backoff: { duration: 'soon' } } },
          { name: 'two', container: { image: 'a' }, script: { image: 'a', source: '' } },
          { name: 'res', resource: { action: 'create', manifest: '{}', mergeStrategy: 'merge' } },
          { name: 'sleepy', suspend: { duration: '2 days' } },
        ],
      }),
    ).toEqual([
      expect.stringMatching(/^spec\.templates\[plain\]\.timeout "10 minutes" is not a valid duration/),
      'spec.templates[plain].retryStrategy.limit must be at least 0, got -1',
      'spec.templates[plain].retryStrategy.retryPolicy must be one of Always, OnFailure, OnError, OnTransientError, got "Sometimes"',
      expect.stringMatching(/^spec\.templates\[plain\]\.retryStrategy\.backoff\.duration "soon" is not a valid duration/),
      'spec.templates[two] has more than one kind (container, script); keep one',
      'spec.templates[res].resource.mergeStrategy is for action patch, not create',
      expect.stringMatching(/^spec\.templates\[sleepy\]\.suspend\.duration "2 days" is not a valid duration/),
      'spec.parallelism must be a whole number of at least 1, got 0',
    ]);
  });

  it('checks templateRefs only when the WorkflowTemplates are given', () => {
    const spec: WorkflowSpec = {
      entrypoint: 'main',
      templates: [{ name: 'main', steps: [[{ name: 's', templateRef: { name: 'lib', template: 'x' } }]] }],
    };
    expect(messages(spec)).toEqual([]);
    expect(messages(spec, {})).toEqual(['spec.templates[main].steps[0][s].templateRef WorkflowTemplate "lib" not found']);
    expect(messages(spec, { 'WorkflowTemplate/lib': { templates: [{ name: 'y', container: { image: 'a' } }] } })).toEqual([
      'spec.templates[main].steps[0][s].templateRef names template "x", which does not exist in WorkflowTemplate "lib"',
    ]);
    expect(messages({ workflowTemplateRef: { name: 'lib' } }, {})).toEqual(['spec.workflowTemplateRef WorkflowTemplate "lib" not found']);
    expect(messages({ workflowTemplateRef: { name: 'lib' } })).toEqual([]);
  });

  it('rejects duplicate names and conditional hooks without an expression', () => {
    expect(messages({ entrypoint: 'plain', templates: [plain, plain] })).toEqual([
      'spec.templates[plain] is defined twice (template names must be unique)',
    ]);
    expect(
      messages({
        entrypoint: 'main',
        templates: [
          {
            name: 'main',
            steps: [[{ name: 'a', template: 'plain' }], [{ name: 'a', template: 'plain', hooks: { running: { template: 'plain' } } }]],
          },
          plain,
        ],
      }),
    ).toEqual([
      'spec.templates[main].steps[1][a] has the name "a" used by another step; step names must be unique',
      'spec.templates[main].steps[1][a].hooks.running needs an expression (for example steps.X.status == "Running" or workflow.status == "Running"): only the exit hook runs without one',
    ]);
  });
});

describe('validateWorkflow: parameter values', () => {
  it('names every parameter value that is a list or an object (AnyString is a string, number or boolean)', () => {
    const take: Template = {
      name: 'take',
      inputs: { parameters: [{ name: 'p', default: { a: 1 } as never, enum: ['x', ['y']] as never }] },
      container: { image: 'a' },
    };
    expect(
      messages({
        entrypoint: 's',
        arguments: { parameters: [{ name: 'g', value: ['x'] as never }] },
        templates: [
          {
            name: 's',
            steps: [
              [{ name: 'a', template: 'take', arguments: { parameters: [{ name: 'p', value: 'x' }] } }],
              [
                { name: 'b', template: 'take', arguments: { parameters: [{ name: 'p', value: 'x' }] } },
                { name: 'c', template: 'take', arguments: { parameters: [{ name: 'p', value: ['x'] as never }] } },
              ],
            ],
          },
          take,
        ],
      }),
    ).toEqual([
      'spec.templates[s].steps[1][c].arguments.parameters[p].value must be a string, number or boolean, got a list',
      'spec.templates[take].inputs.parameters[p].default must be a string, number or boolean, got an object',
      'spec.templates[take].inputs.parameters[p].enum[1] must be a string, number or boolean, got a list',
      'spec.arguments.parameters[g].value must be a string, number or boolean, got a list',
    ]);
  });

  it('accepts numbers and booleans', () => {
    const take: Template = { name: 'take', inputs: { parameters: [{ name: 'p', enum: [1, true, 'x'] }] }, container: { image: 'a' } };
    expect(
      messages({
        entrypoint: 's',
        templates: [{ name: 's', steps: [[{ name: 'a', template: 'take', arguments: { parameters: [{ name: 'p', value: 1 }] } }]] }, take],
      }),
    ).toEqual([]);
  });
});

describe('user JSON in a workflow', () => {
  it('refuses a __proto__ key anywhere in the spec or its template sources, naming the field', () => {
    const spec = JSON.parse(
      '{"entrypoint": "m", "templates": [{"name": "m", "plugin": {"hello": {"__proto__": {"polluted": 1}}}}]}',
    ) as WorkflowSpec;
    expect(messages(spec)).toEqual([
      'spec.templates[0].plugin.hello.__proto__ is a key named "__proto__", which plugflow refuses in user JSON and YAML (it could rewrite object prototypes): rename or remove it',
    ]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
