/**
 * Template `annotations`: workflows.plugflow.io/display-name names the node (rendered with its
 * inputs, as the peer's loops-param-argument example does), other plugflow keys and the peer's
 * own key are refused, any other key is metadata only.
 */
import { describe, expect, it } from 'vitest';
import type { Template, WorkflowSpec } from '../api/index.js';
import { displayNameProblem, templateDisplayName } from './display-name.js';
import { World } from './test-world.js';
import { validateWorkflow } from './validate.js';

const KEY = 'workflows.plugflow.io/display-name';

const osRelease: Template = {
  name: 'cat-os-release',
  annotations: { [KEY]: 'os-{{inputs.parameters.image}}-{{inputs.parameters.tag}}', 'team.example.com/owner': 'ci' },
  inputs: { parameters: [{ name: 'image' }, { name: 'tag' }] },
  container: { image: '{{inputs.parameters.image}}:{{inputs.parameters.tag}}', command: ['cat'], args: ['/etc/os-release'] },
};

const loop: WorkflowSpec = {
  entrypoint: 'main',
  templates: [
    {
      name: 'main',
      steps: [
        [
          {
            name: 'test-linux',
            template: 'cat-os-release',
            arguments: {
              parameters: [
                { name: 'image', value: '{{item.image}}' },
                { name: 'tag', value: '{{item.tag}}' },
              ],
            },
            withItems: [
              { image: 'debian', tag: '9.1' },
              { image: 'alpine', tag: '3.6' },
            ],
          },
        ],
      ],
    },
    osRelease,
  ],
};

const problems = (spec: WorkflowSpec) =>
  validateWorkflow({ metadata: { name: 'w', namespace: 'ns' }, spec }).map((e) => `${e.field} ${e.detail}`);

describe('the display-name annotation', () => {
  it("renders with the node's inputs and becomes its displayName, the node name unchanged", () => {
    expect(problems(loop)).toEqual([]);
    const w = new World(loop);
    w.reconcile();
    expect(w.runningPods()).toEqual(['os-alpine-3.6', 'os-debian-9.1']);
    expect(w.node('os-debian-9.1').name).toBe('wf[0].test-linux(0:image:debian,tag:9.1)');
    w.succeedAll();
    w.reconcile();
    expect(w.status.phase).toBe('Succeeded');
  });

  it('names a retried node, whose attempts are <displayName>(n)', () => {
    const spec: WorkflowSpec = {
      entrypoint: 'main',
      templates: [
        {
          name: 'main',
          annotations: { [KEY]: 'flaky.{{workflow.name}}' },
          retryStrategy: { limit: 1 },
          container: { image: 'alpine', command: ['false'] },
        },
      ],
    };
    const w = new World(spec);
    w.reconcile();
    expect(w.node('flaky.wf').type).toBe('Retry');
    expect(w.runningPods()).toEqual(['flaky.wf(0)']);
    w.failPod('flaky.wf(0)');
    w.reconcile();
    expect(w.runningPods()).toEqual(['flaky.wf(1)']);
  });

  it('ends the node in Error when the rendered name is not one, naming the field', () => {
    const spec: WorkflowSpec = {
      entrypoint: 'main',
      arguments: { parameters: [{ name: 'who', value: 'not a name' }] },
      templates: [{ name: 'main', annotations: { [KEY]: '{{workflow.parameters.who}}' }, suspend: {} }],
    };
    expect(problems(spec)).toEqual([]);
    const w = new World(spec);
    w.reconcile();
    const node = w.node('wf');
    expect(node.phase).toBe('Error');
    expect(node.message).toBe(
      `spec.templates[main].annotations.${KEY} gives "not a name", which is not a display name: 2 to 63 letters, digits, '-' and '.', starting and ending with a letter or digit`,
    );
    expect(w.status.phase).toBe('Error');
  });

  it('is refused at validation when literal and invalid; the peer’s key and other plugflow keys are refused, others kept', () => {
    const spec = (annotations: Record<string, string>): WorkflowSpec => ({
      entrypoint: 'main',
      templates: [{ name: 'main', annotations, suspend: {} }],
    });
    expect(problems(spec({ [KEY]: '-x-' }))[0]).toMatch(
      /^spec\.templates\[main\]\.annotations\.workflows\.plugflow\.io\/display-name gives "-x-"/,
    );
    expect(problems(spec({ 'workflows.argoproj.io/display-name': 'x1' }))).toEqual([
      "spec.templates[main].annotations.workflows.argoproj.io/display-name is the peer's key: plugflow reads workflows.plugflow.io/display-name",
    ]);
    expect(problems(spec({ 'workflows.plugflow.io/displayname': 'x1' }))).toEqual([
      'spec.templates[main].annotations.workflows.plugflow.io/displayname is not a template annotation plugflow knows: the only one is workflows.plugflow.io/display-name',
    ]);
    expect(problems(spec({ 'example.com/anything': 'any value at all', [KEY]: 'ok.1' }))).toEqual([]);
  });

  it('checks names as the peer does', () => {
    for (const ok of ['ab', 'os-debian-9.1', 'A.b-C', 'x'.repeat(63)]) expect(displayNameProblem(ok), ok).toBeUndefined();
    for (const bad of ['a', '', '-ab', 'ab.', 'a b', 'a_b', 'x'.repeat(64)]) expect(displayNameProblem(bad), bad).toBeDefined();
    expect(templateDisplayName({ name: 't', suspend: {} }, {}, 'here')).toEqual({ ok: true, displayName: undefined });
    expect(templateDisplayName({ name: 't', suspend: {}, annotations: { [KEY]: '{{inputs.parameters.x}}' } }, {}, 'here')).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^here\.annotations\.workflows\.plugflow\.io\/display-name: /),
    });
  });
});
