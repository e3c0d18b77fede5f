import { describe, expect, it } from 'vitest';
import { crdDefinitions } from './definitions.js';
import { OfflineValidator, pointerToField, SchemaValidator } from './offline-validator.js';
import { sampleEventBinding, sampleTaskSet, workflowWithEveryTemplateKind } from './sample-documents.js';
import { prunedFields } from './schema-walk.js';
import type { Schema } from './schema-builders.js';

const crds = new Map(crdDefinitions().map((c) => [c.spec.names.kind, c]));
const validator = (kind: string) => new OfflineValidator(crds.get(kind)!);
const schemaOf = (kind: string): Schema => crds.get(kind)!.spec.versions[0]!.schema.openAPIV3Schema;

/** A deep copy of the sample workflow, changed by `edit`. */
function workflowWith(edit: (wf: any) => void): unknown {
  const wf = structuredClone(workflowWithEveryTemplateKind());
  edit(wf);
  return wf;
}

describe('the sample documents', () => {
  it.each([
    ['Workflow', workflowWithEveryTemplateKind()],
    ['WorkflowTemplate', { ...workflowWithEveryTemplateKind(), kind: 'WorkflowTemplate', status: undefined }],
    ['ClusterWorkflowTemplate', { ...workflowWithEveryTemplateKind(), kind: 'ClusterWorkflowTemplate' }],
    ['WorkflowEventBinding', sampleEventBinding()],
    ['WorkflowTaskSet', sampleTaskSet()],
  ])('%s is valid and loses no field to pruning', (kind, doc) => {
    const clean = JSON.parse(JSON.stringify(doc));
    expect(validator(kind).check(clean)).toEqual([]);
    expect(prunedFields(schemaOf(kind), clean)).toEqual([]);
  });

  it('uses all ten template kinds', () => {
    const kinds = new Set(workflowWithEveryTemplateKind().spec.templates!.flatMap((t) => Object.keys(t)));
    for (const k of ['container', 'script', 'dag', 'steps', 'suspend', 'resource', 'http', 'plugin', 'containerSet', 'data']) {
      expect(kinds.has(k), k).toBe(true);
    }
  });
});

describe('the Workflow schema rejects the common mistakes, naming the field', () => {
  const messages = (doc: unknown) =>
    validator('Workflow')
      .check(doc)
      .map((e) => e.message);

  it('a plugin section with two keys', () => {
    const doc = workflowWith((wf) => (wf.spec.templates[7].plugin = { a: {}, b: {} }));
    expect(messages(doc)).toEqual(['spec.templates[7].plugin must have at most 1 key(s)']);
  });

  it('an empty plugin section', () => {
    const doc = workflowWith((wf) => (wf.spec.templates[7].plugin = {}));
    expect(messages(doc)).toEqual(['spec.templates[7].plugin must have at least 1 key(s)']);
  });

  it('a template without a name', () => {
    const doc = workflowWith((wf) => delete wf.spec.templates[4].name);
    expect(messages(doc)).toEqual(['spec.templates[4].name is required']);
  });

  it('a template name that cannot be one', () => {
    const doc = workflowWith((wf) => (wf.spec.templates[4].name = 'my_template'));
    expect(messages(doc)).toEqual(['spec.templates[4].name must match pattern "^[a-zA-Z0-9][-a-zA-Z0-9]*$"']);
  });

  it('two templates with the same name', () => {
    const doc = workflowWith((wf) => (wf.spec.templates[4].name = 'main'));
    expect(messages(doc)).toEqual(['spec.templates has duplicate names']);
  });

  it('bad enums', () => {
    const doc = workflowWith((wf) => {
      wf.spec.templates[1].retryStrategy.retryPolicy = 'Sometimes';
      wf.spec.templates[5].resource.action = 'upsert';
      wf.spec.templates[5].resource.mergeStrategy = 'deep';
    });
    expect(messages(doc)).toEqual([
      'spec.templates[1].retryStrategy.retryPolicy must be one of "Always", "OnFailure", "OnError", "OnTransientError"',
      'spec.templates[5].resource.action must be one of "get", "create", "apply", "delete", "replace", "patch"',
      'spec.templates[5].resource.mergeStrategy must be one of "strategic", "merge", "json"',
    ]);
  });

  it('wrong types', () => {
    const doc = workflowWith((wf) => {
      wf.spec.entrypoint = ['main'];
      wf.spec.templates[1].retryStrategy.limit = 1.5;
      wf.spec.templates[3].steps[0] = { name: 'not-a-group' };
      wf.spec.templates[6].http.timeoutSeconds = '20';
    });
    expect(messages(doc).sort()).toEqual([
      'spec.entrypoint must be string',
      'spec.templates[1].retryStrategy.limit must be an integer or a string',
      'spec.templates[3].steps[0] must be array',
      'spec.templates[6].http.timeoutSeconds must be integer',
    ]);
  });

  it('missing required parts of kind sections', () => {
    const doc = workflowWith((wf) => {
      delete wf.spec.templates[0].dag.tasks[0].name;
      delete wf.spec.templates[6].http.url;
      delete wf.spec.templates[5].resource.action;
      wf.spec.arguments.parameters.push({ value: 'no name' });
    });
    expect(messages(doc).sort()).toEqual(
      [
        'spec.arguments.parameters[5].name is required',
        'spec.templates[0].dag.tasks[0].name is required',
        'spec.templates[5].resource.action is required',
        'spec.templates[6].http.url is required',
      ].sort(),
    );
  });

  it('a workflow without a spec', () => {
    expect(messages({ apiVersion: 'plugflow.io/v1alpha1', kind: 'Workflow', metadata: { name: 'x' } })).toEqual(['spec is required']);
  });

  it('accepts AnyString values of every type and int-or-string fields both ways', () => {
    const doc = workflowWith((wf) => {
      wf.spec.arguments.parameters.push({ name: 'f', value: false, default: 0.25 });
      wf.spec.templates[1].retryStrategy.limit = 5;
      wf.spec.templates[1].activeDeadlineSeconds = '{{workflow.parameters.deadline}}';
    });
    expect(messages(doc)).toEqual([]);
  });
});

describe('the binding schema', () => {
  it('requires a selector and a template name', () => {
    const doc = structuredClone(sampleEventBinding()) as any;
    delete doc.spec.event.selector;
    delete doc.spec.submit.workflowTemplateRef.name;
    expect(
      validator('WorkflowEventBinding')
        .check(doc)
        .map((e) => e.message),
    ).toEqual(['spec.event.selector is required', 'spec.submit.workflowTemplateRef.name is required']);
  });
});

describe('a list of the wrong items', () => {
  it('reports each item, not duplicate names among items that have none', () => {
    const doc = workflowWith((wf) => (wf.spec.templates = [1, null, [], 'x']));
    expect(
      validator('Workflow')
        .check(doc)
        .map((e) => e.message),
    ).toEqual([0, 1, 2, 3].map((i) => `spec.templates[${i}] must be object`));
  });
});

describe('SchemaValidator', () => {
  it('validates against a schema derived from a CRD', () => {
    const root = schemaOf('Workflow');
    const v = new SchemaValidator({
      ...root,
      properties: { ...root.properties, metadata: { type: 'object', properties: { name: { type: 'string' } } } },
    });
    expect(v.check({ metadata: { name: 'x' }, spec: {} })).toEqual([]);
    expect(v.check({ metadata: { name: 7 }, spec: { templates: 3 } }).map((e) => e.message)).toEqual([
      'metadata.name must be string',
      'spec.templates must be array',
    ]);
  });
});

describe('pointerToField', () => {
  it('writes API-server style paths', () => {
    expect(pointerToField('')).toBe('<root>');
    expect(pointerToField('/spec/templates/0/name')).toBe('spec.templates[0].name');
    expect(pointerToField('/metadata/labels/a~1b')).toBe('metadata.labels["a/b"]');
  });
});

describe('prunedFields', () => {
  it('names fields the schema would drop', () => {
    const doc = workflowWith((wf) => {
      wf.spec.templates[1].contianer = {};
      wf.spec.templates[0].dag.tasks[0].dependson = 'x';
      wf.spec.somethingNew = { kept: true };
    });
    expect(prunedFields(schemaOf('Workflow'), doc)).toEqual(['spec.templates[0].dag.tasks[0].dependson', 'spec.templates[1].contianer']);
  });
});
