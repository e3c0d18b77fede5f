import { describe, expect, it } from 'vitest';
import type { Template, WorkflowSpec } from '../api/index.js';
import { validateWorkflow } from './validate.js';

const problems = (templates: Template[], spec: Partial<WorkflowSpec> = {}): string[] =>
  validateWorkflow({
    apiVersion: 'plugflow.io/v1alpha1',
    kind: 'Workflow',
    metadata: { name: 'w' },
    spec: { entrypoint: templates[0]!.name, templates, ...spec },
  } as never).map((e) => `${e.field} ${e.detail}`);

const say: Template = { name: 'say', container: { image: 'alpine', command: ['true'] } };

describe('pod fields on templates that run no pod', () => {
  it('are refused by name rather than ignored', () => {
    expect(
      problems([
        { name: 'main', steps: [[{ name: 'a', template: 'say' }]], nodeSelector: { disk: 'ssd' }, sidecars: [{ name: 's', image: 'x' }] },
        { name: 'wait', suspend: {}, podSpecPatch: '{}' },
        { name: 'cm', resource: { action: 'get', manifest: 'kind: ConfigMap' }, tolerations: [], serviceAccountName: 'ok' },
        { name: 'fan', dag: { tasks: [{ name: 'a', template: 'say' }] }, serviceAccountName: 'ci' },
        say,
      ]),
    ).toEqual([
      'spec.templates[main].sidecars shapes the step pod, and a steps template runs none (only container, script, containerSet, data templates do)',
      'spec.templates[main].nodeSelector shapes the step pod, and a steps template runs none (only container, script, containerSet, data templates do)',
      'spec.templates[wait].podSpecPatch shapes the step pod, and a suspend template runs none (only container, script, containerSet, data templates do)',
      'spec.templates[cm].tolerations shapes the step pod, and a resource template runs none (only container, script, containerSet, data templates do)',
      "spec.templates[fan].serviceAccountName is the account of a step pod or of a resource template's calls; a dag template has neither (set it on the templates it calls, or spec.serviceAccountName)",
    ]);
  });

  it("an empty metadata (the peer's CLI sends `metadata: {}` on every template) asks for nothing and is accepted", () => {
    expect(
      problems([
        { name: 'main', steps: [[{ name: 'a', template: 'wait' }]], metadata: {} },
        { name: 'wait', suspend: {}, metadata: { labels: {}, annotations: {} } },
      ] as Template[]),
    ).toEqual([]);
    expect(problems([{ name: 'wait', suspend: {}, metadata: { labels: { a: 'b' } } }])).toEqual([
      'spec.templates[wait].metadata shapes the step pod, and a suspend template runs none (only container, script, containerSet, data templates do)',
    ]);
  });

  it('are accepted on pod templates, and templateDefaults gives them only to those', () => {
    expect(problems([{ ...say, nodeSelector: { disk: 'ssd' }, serviceAccountName: 'ci', metadata: { labels: { a: 'b' } } }])).toEqual([]);
    expect(
      problems([{ name: 'main', steps: [[{ name: 'a', template: 'say' }]] }, say], {
        templateDefaults: {
          nodeSelector: { disk: 'ssd' },
          serviceAccountName: 'ci',
          sidecars: [{ name: 's', image: 'x', command: ['y'] }],
        },
      }),
    ).toEqual([]);
  });
});
