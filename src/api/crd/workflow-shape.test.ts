import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { workflowWithEveryTemplateKind } from './sample-documents.js';
import { MAX_WORKFLOW_DEPTH, workflowShapeProblems } from './workflow-shape.js';

const messages = (doc: unknown) => workflowShapeProblems(doc).map((p) => p.message);
const container = { name: 'main', container: { image: 'busybox' } };
const withSpec = (spec: unknown, rest: Record<string, unknown> = {}) => ({ metadata: { generateName: 'x-' }, spec, ...rest });

/** `[[[…1…]]]`, `levels` arrays deep. */
function nested(levels: number): unknown {
  let v: unknown = 1;
  for (let i = 0; i < levels; i++) v = [v];
  return v;
}

describe('workflowShapeProblems', () => {
  it('passes the sample workflow and every example workflow', () => {
    expect(messages(JSON.parse(JSON.stringify(workflowWithEveryTemplateKind())))).toEqual([]);
    const dir = new URL('../../../examples/workflows/', import.meta.url);
    let seen = 0;
    for (const file of readdirSync(dir)) {
      for (const doc of parseAllDocuments(readFileSync(new URL(file, dir), 'utf8'))) {
        const v = doc.toJS() as { kind?: string } | null;
        if (v?.kind !== 'Workflow' && v?.kind !== 'WorkflowTemplate') continue;
        seen++;
        expect(messages(v), file).toEqual([]);
      }
    }
    expect(seen).toBeGreaterThan(5);
  });

  it.each<[string, unknown, string]>([
    ['spec.templates = -1', withSpec({ entrypoint: 'main', templates: -1 }), 'spec.templates must be array'],
    ['spec.templates = 0', withSpec({ entrypoint: 'main', templates: 0 }), 'spec.templates must be array'],
    ['spec.templates = true', withSpec({ entrypoint: 'main', templates: true }), 'spec.templates must be array'],
    ['spec.templates = "x"', withSpec({ entrypoint: 'main', templates: 'x' }), 'spec.templates must be array'],
    ['spec.templates = "\\u0000"', withSpec({ entrypoint: 'main', templates: '\u0000' }), 'spec.templates must be array'],
    ['spec.templates = {}', withSpec({ entrypoint: 'main', templates: { main: container } }), 'spec.templates must be array'],
    ['spec.templates = [[], null]', withSpec({ entrypoint: 'main', templates: [[], null] }), 'spec.templates[1] must be object'],
    ['spec.templates[0] = null', withSpec({ entrypoint: 'main', templates: [null] }), 'spec.templates[0] must be object'],
    ['spec.templates[0] in a list', withSpec({ entrypoint: 'main', templates: [[container]] }), 'spec.templates[0] must be object'],
    ['spec = []', { metadata: { name: 'x' }, spec: [] }, 'spec must be object'],
    [
      'metadata.name an object',
      withSpec({ entrypoint: 'main', templates: [container] }, { metadata: { name: { toString: [1] } } }),
      'metadata.name must be string',
    ],
    [
      'metadata.generateName a number',
      withSpec({ entrypoint: 'main', templates: [container] }, { metadata: { generateName: 7 } }),
      'metadata.generateName must be string',
    ],
    [
      'metadata.namespace a list',
      withSpec({ entrypoint: 'main', templates: [container] }, { metadata: { name: 'x', namespace: ['a'] } }),
      'metadata.namespace must be string',
    ],
    [
      'metadata.labels values',
      withSpec({ entrypoint: 'main', templates: [container] }, { metadata: { name: 'x', labels: { a: 1 } } }),
      'metadata.labels.a must be string',
    ],
    [
      'apiVersion a list',
      withSpec({ entrypoint: 'main', templates: [container] }, { apiVersion: ['plugflow.io/v1alpha1'] }),
      'apiVersion must be string',
    ],
    ['kind an object', withSpec({ entrypoint: 'main', templates: [container] }, { kind: { toString: [] } }), 'kind must be string'],
    ['steps a number', withSpec({ entrypoint: 'main', templates: [{ name: 'main', steps: -1 }] }), 'spec.templates[0].steps must be array'],
    [
      'a step null',
      withSpec({ entrypoint: 'main', templates: [{ name: 'main', steps: [[null]] }] }),
      'spec.templates[0].steps[0][0] must be object',
    ],
    [
      'dag.tasks an object',
      withSpec({ entrypoint: 'main', templates: [{ name: 'main', dag: { tasks: {} } }] }),
      'spec.templates[0].dag.tasks must be array',
    ],
    [
      'arguments.parameters a string',
      withSpec({ entrypoint: 'main', templates: [container], arguments: { parameters: 'p' } }),
      'spec.arguments.parameters must be array',
    ],
    [
      'hooks.exit a string',
      withSpec({ entrypoint: 'main', templates: [container], hooks: { exit: 'x' } }),
      'spec.hooks.exit must be object',
    ],
    [
      'an inline template of the wrong shape',
      withSpec({
        entrypoint: 'main',
        templates: [{ name: 'main', steps: [[{ name: 's', inline: { steps: [[{ name: 't', inline: { dag: { tasks: 3 } } }]] } }]] }],
      }),
      'spec.templates[0].steps[0][0].inline.steps[0][0].inline.dag.tasks must be array',
    ],
    [
      'an inline template that is not an object',
      withSpec({ entrypoint: 'main', templates: [{ name: 'main', dag: { tasks: [{ name: 'a', inline: [] }] } }] }),
      'spec.templates[0].dag.tasks[0].inline must be object',
    ],
  ])('%s: names the field', (_label, doc, expected) => {
    expect(messages(doc)).toContain(expected);
  });

  it('accepts inline templates without a name, checked at every level', () => {
    const inline = { steps: [[{ name: 'inner', inline: { container: { image: 'busybox' } } }]] };
    expect(messages(withSpec({ entrypoint: 'main', templates: [{ name: 'main', steps: [[{ name: 's', inline }]] }] }))).toEqual([]);
  });

  it('refuses nesting beyond the bound, naming where, without recursing', () => {
    const ok = withSpec({
      entrypoint: 'main',
      templates: [{ name: 'main', steps: [[{ name: 's', template: 'main', withItems: [nested(MAX_WORKFLOW_DEPTH - 10)] }]] }],
    });
    expect(messages(ok)).toEqual([]);
    // Far deeper than any recursive walk (JSON.parse builds it iteratively) could follow.
    const deep = JSON.parse(
      `{"spec":{"templates":[{"name":"main","steps":[[{"name":"s","template":"main","withItems":${'['.repeat(200_000)}${']'.repeat(200_000)}}]]}]}}`,
    );
    const found = messages(deep);
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(
      /^spec\.templates\[0\]\.steps\[0\]\[0\]\.withItems(\[0\])+ nests arrays and objects more than 100 levels deep$/,
    );
  });

  it('is total: any JSON value gets an answer, never an exception', () => {
    for (const v of [
      null,
      0,
      -1,
      true,
      'x',
      [],
      [null],
      {},
      { spec: null },
      { spec: { templates: [[null]] } },
      { metadata: [], spec: {} },
    ]) {
      expect(() => workflowShapeProblems(v)).not.toThrow();
      expect(workflowShapeProblems(v).length).toBeGreaterThan(0);
    }
  });
});
