import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import type { Template, Workflow, WorkflowSpec } from '../api/index.js';
import type { TemplateSource } from './contract.js';
import { validateWorkflow } from './validate.js';
import { checkReferencedTemplates, checkSpecFields } from './validate-fields.js';
import { TemplateResolver } from './template-resolver.js';

const echo: Template = { name: 'echo', container: { image: 'alpine', command: ['echo', 'hi'] } };

function messages(spec: WorkflowSpec, sources?: Record<string, TemplateSource>): string[] {
  const wf: Workflow = { metadata: { name: 'wf', namespace: 'ns' }, spec };
  return validateWorkflow(wf, sources).map((e) => e.message);
}

const refused = (m: string) => m.includes(' is not supported yet: ');

describe('no field is silently ignored', () => {
  it('refuses the fields of issue 18 at workflow and template level, naming each full path', () => {
    const found = messages({
      entrypoint: 'main',
      ...({ podPriority: 1 } as object),
      templates: [
        {
          ...echo,
          name: 'main',
          executor: { serviceAccountName: 'x' },
          priority: 1,
          inputs: { artifacts: [{ name: 'in', path: '/in', hdfs: { path: '/x' } }] },
          outputs: { artifacts: [{ name: 'out', path: '/out', archive: { zip: {} }, deleted: true }] },
        },
      ],
    }).filter(refused);
    expect(found.map((m) => m.slice(0, m.indexOf(' is not supported yet')))).toEqual([
      'spec.podPriority',
      'spec.templates[main].executor',
      'spec.templates[main].priority',
      'spec.templates[main].inputs.artifacts[in].hdfs',
      'spec.templates[main].outputs.artifacts[out].archive.zip',
      'spec.templates[main].outputs.artifacts[out].deleted',
    ]);
    expect(found).toContain(
      "spec.templates[main].priority is not supported yet: the peer sets it as the step pod's spec.priority, which Kubernetes' Priority admission refuses unless it equals the priorityClassName's value; use priorityClassName",
    );
  });

  it("refuses the peer's database-backed locks, at both levels, with the reason (not as unknown)", () => {
    const found = messages({
      entrypoint: 'main',
      synchronization: { semaphores: [{ database: { key: 'k' } } as never] },
      templates: [{ ...echo, name: 'main', synchronization: { mutexes: [{ name: 'm', database: true } as never] } }],
    });
    expect(found.filter(refused).map((m) => m.slice(0, m.indexOf(' is not supported yet')))).toEqual([
      'spec.synchronization.semaphores[0].database',
      'spec.templates[main].synchronization.mutexes[m].database',
    ]);
    expect(found.join('\n')).not.toContain('is not a field plugflow knows');
    expect(found.find((m) => m.startsWith('spec.synchronization'))).toMatch(/give the limit in a ConfigMap key \(configMapKeyRef\)/);
  });

  it('walks steps, tasks, inline templates, hooks and arguments', () => {
    const found = messages({
      entrypoint: 'main',
      templates: [
        {
          name: 'main',
          steps: [
            [
              {
                name: 'a',
                inline: { container: { image: 'alpine', command: ['true'] }, priority: 2 } as Template,
                arguments: { artifacts: [{ name: 'x', path: '/x' }] },
              },
            ],
          ],
        },
        {
          name: 'd',
          dag: {
            tasks: [
              {
                name: 't',
                template: 'echo',
                hooks: { exit: { template: 'echo', arguments: { parameters: [{ name: 'p', value: 'x', globalName: 'g' }] } } },
              },
            ],
          },
        },
        { ...echo, retryStrategy: { limit: 1 }, priority: 1 } as Template,
      ],
    }).filter(refused);
    expect(found.map((m) => m.slice(0, m.indexOf(' is not supported yet')))).toEqual([
      'spec.templates[main].steps[0][a].inline.priority',
      'spec.templates[main].steps[0][a].arguments.artifacts[x].path',
      'spec.templates[d].dag.tasks[t].hooks.exit.arguments.parameters[p].globalName',
      'spec.templates[echo].priority',
    ]);
  });

  it('refuses unknown fields, including keys named like Object.prototype members', () => {
    const spec = JSON.parse(
      '{"entrypoint":"echo","templates":[{"name":"echo","container":{"image":"a","command":["x"],"comand":["y"]}}],"constructor":1,"entrypont":"x"}',
    ) as WorkflowSpec;
    expect(messages(spec)).toEqual([
      'spec.templates[echo].container.comand is not a field plugflow knows (Container); check its spelling or remove it',
      'spec.constructor is not a field plugflow knows (WorkflowSpec); check its spelling or remove it',
      'spec.entrypont is not a field plugflow knows (WorkflowSpec); check its spelling or remove it',
    ]);
    // A __proto__ key is refused before the field walk, as hostile user JSON (src/api/user-json.ts).
    const hostile = JSON.parse(
      '{"entrypoint":"echo","templates":[{"name":"echo","container":{"image":"a"}}],"__proto__":{"x":1}}',
    ) as WorkflowSpec;
    expect(messages(hostile)).toEqual([
      'spec.__proto__ is a key named "__proto__", which plugflow refuses in user JSON and YAML (it could rewrite object prototypes): rename or remove it',
    ]);
  });

  it('checks templates reached in WorkflowTemplates, transitively, and the spec a workflowTemplateRef brings', () => {
    const sources: Record<string, TemplateSource> = {
      'WorkflowTemplate/shared': {
        templates: [
          { name: 'outer', steps: [[{ name: 's', template: 'inner' }]] },
          { ...echo, name: 'inner', priority: 1 } as Template,
          { ...echo, name: 'unused', priority: 1 } as Template,
        ],
      },
      'WorkflowTemplate/base': {
        templates: [echo],
        entrypoint: 'echo',
        spec: { entrypoint: 'echo', templates: [echo], podPriority: 1 } as never,
      },
    };
    expect(
      messages(
        { entrypoint: 'main', templates: [{ name: 'main', steps: [[{ name: 'x', templateRef: { name: 'shared', template: 'outer' } }]] }] },
        sources,
      ),
    ).toEqual([
      "WorkflowTemplate/shared spec.templates[inner].priority is not supported yet: the peer sets it as the step pod's spec.priority, which Kubernetes' Priority admission refuses unless it equals the priorityClassName's value; use priorityClassName",
    ]);
    expect(messages({ workflowTemplateRef: { name: 'base' } }, sources).filter(refused)).toEqual([
      'spec.podPriority is not supported yet: deprecated by the peer; use podPriorityClassName',
    ]);
  });

  it('accepts every example workflow of the repository', () => {
    const dir = join(import.meta.dirname, '../../examples/workflows');
    const examples = join(import.meta.dirname, '../../examples');
    const files = [
      ...readdirSync(dir).map((f) => join(dir, f)),
      ...['hello-world.yaml', 'events/workflow-template.yaml', 'plugins/hello/workflow.yaml', 'plugins/progress/workflow.yaml'].map((f) =>
        join(examples, f),
      ),
    ];
    const problems: string[] = [];
    for (const file of files) {
      for (const doc of parseAllDocuments(readFileSync(file, 'utf8'))) {
        const obj = doc.toJS() as { spec?: WorkflowSpec } | null;
        if (obj?.spec) checkSpecFields(obj.spec, (f, d) => problems.push(`${file}: ${f} ${d}`));
      }
    }
    expect(files.length).toBeGreaterThan(5);
    expect(problems).toEqual([]);
  });
});

describe('workflow argument enum', () => {
  it('binds the value of a workflow argument to its own enum', () => {
    expect(
      messages({
        entrypoint: 'echo',
        templates: [echo],
        arguments: { parameters: [{ name: 'env', value: 'prod', enum: ['dev', 'test'] }] },
      }),
    ).toEqual(['spec.arguments.parameters[env] value "prod" is not one of the allowed values ["dev","test"]']);
    expect(
      messages({
        entrypoint: 'echo',
        templates: [echo],
        arguments: { parameters: [{ name: 'env', value: 'dev', enum: ['dev', 'test'] }] },
      }),
    ).toEqual([]);
  });
});

describe('hostile shapes', () => {
  it('never throws, whatever the spec holds', () => {
    const shapes: unknown[] = [
      null,
      1,
      'x',
      [],
      { templates: 'x' },
      { templates: [null, 1, { steps: 'x', dag: 'y' }, { steps: [null, [null, 1]], dag: { tasks: [null] } }] },
      { hooks: [1] },
      { arguments: { parameters: 'x' } },
    ];
    const sources: Record<string, TemplateSource> = { 'WorkflowTemplate/x': { templates: [null as never] } };
    for (const spec of shapes) {
      expect(() => checkSpecFields(spec as WorkflowSpec, () => {})).not.toThrow();
      expect(() => checkReferencedTemplates(spec as WorkflowSpec, new TemplateResolver([], sources), () => {})).not.toThrow();
    }
  });
});
