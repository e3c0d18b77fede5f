import { describe, expect, it } from 'vitest';
import type { Template } from '../api/index.js';
import { templateSourceKey, type TemplateSource } from './contract.js';
import { missingTemplateSources } from './effective-spec.js';
import { World } from './test-world.js';

const lib: TemplateSource = {
  templates: [
    {
      name: 'greet',
      inputs: { parameters: [{ name: 'who' }] },
      steps: [[{ name: 'say', template: 'say', arguments: { parameters: [{ name: 'who', value: '{{inputs.parameters.who}}' }] } }]],
    },
    { name: 'say', inputs: { parameters: [{ name: 'who' }] }, container: { image: 'alpine', args: ['hello {{inputs.parameters.who}}'] } },
  ],
};
const cluster: TemplateSource = { templates: [{ name: 'ping', container: { image: 'busybox', args: ['ping'] } }] };

describe('templateRef and workflowTemplateRef', () => {
  it('runs templates from WorkflowTemplates and ClusterWorkflowTemplates, resolving names in their scope', () => {
    const main: Template = {
      name: 'main',
      steps: [
        [
          { name: 'hi', templateRef: { name: 'lib', template: 'greet' }, arguments: { parameters: [{ name: 'who', value: 'bob' }] } },
          { name: 'p', templateRef: { name: 'shared', template: 'ping', clusterScope: true } },
        ],
      ],
    };
    const w = new World(
      { entrypoint: 'main', templates: [main] },
      {
        templates: {
          [templateSourceKey('WorkflowTemplate', 'lib')]: lib,
          [templateSourceKey('ClusterWorkflowTemplate', 'shared')]: cluster,
        },
      },
    );
    w.reconcile();
    expect(w.node('hi')).toMatchObject({ type: 'Steps', templateRef: { name: 'lib', template: 'greet' } });
    expect(w.node('say')).toMatchObject({ templateName: 'say', templateScope: 'WorkflowTemplate/lib' });
    expect(w.created.get(w.pod('say').podName)!.template.container?.args).toEqual(['hello bob']);
    expect(w.created.get(w.pod('p').podName)!.template.container?.image).toBe('busybox');
    w.succeedAll();
    w.reconcile();
    expect(w.status.phase).toBe('Succeeded');
  });

  it('fails at once when a referenced WorkflowTemplate is missing', () => {
    const w = new World({
      entrypoint: 'main',
      templates: [{ name: 'main', steps: [[{ name: 'x', templateRef: { name: 'nope', template: 't' } }]] }],
    });
    w.reconcile();
    expect(w.status.phase).toBe('Failed');
    expect(w.status.message).toContain('spec.templates[main].steps[0][x].templateRef WorkflowTemplate "nope" not found');
  });

  it('runs a workflow built from a WorkflowTemplate, its own arguments winning', () => {
    const source: TemplateSource = {
      templates: lib.templates,
      spec: { entrypoint: 'greet', arguments: { parameters: [{ name: 'who', value: 'default' }] }, templates: lib.templates },
    };
    const w = new World(
      { workflowTemplateRef: { name: 'lib' }, arguments: { parameters: [{ name: 'who', value: 'eve' }] } },
      { templates: { [templateSourceKey('WorkflowTemplate', 'lib')]: source } },
    );
    w.reconcile();
    expect(w.node('wf')).toMatchObject({ type: 'Steps', templateName: 'greet' });
    expect(w.created.get(w.pod('say').podName)!.template.container?.args).toEqual(['hello eve']);
  });

  it('fails at once when spec.workflowTemplateRef cannot be found', () => {
    const w = new World({ workflowTemplateRef: { name: 'gone', clusterScope: true } });
    w.reconcile();
    expect(w.status).toMatchObject({ phase: 'Failed', message: 'spec.workflowTemplateRef: ClusterWorkflowTemplate "gone" not found' });
  });

  it('lists the templates the controller must fetch, following fetched ones', () => {
    const wf = { metadata: { name: 'wf' }, spec: { workflowTemplateRef: { name: 'top' } } };
    expect(missingTemplateSources(wf)).toEqual([{ kind: 'WorkflowTemplate', name: 'top' }]);
    const top: TemplateSource = {
      templates: [
        {
          name: 'main',
          dag: {
            tasks: [
              { name: 'a', templateRef: { name: 'shared', template: 'ping', clusterScope: true } },
              { name: 'b', templateRef: { name: 'lib', template: 'say' } },
            ],
          },
        },
      ],
    };
    expect(missingTemplateSources(wf, { 'WorkflowTemplate/top': top })).toEqual([
      { kind: 'ClusterWorkflowTemplate', name: 'shared' },
      { kind: 'WorkflowTemplate', name: 'lib' },
    ]);
    expect(
      missingTemplateSources(wf, { 'WorkflowTemplate/top': top, 'ClusterWorkflowTemplate/shared': cluster, 'WorkflowTemplate/lib': lib }),
    ).toEqual([]);
  });
});
