import { describe, expect, expectTypeOf, it } from 'vitest';
import { bool, openObject, str } from './crd/schema-builders.js';
import { no, ok } from './field-rules.js';
import { field, record, ref, untyped, variant, type RecordOf } from './record-declaration.js';
import { TEMPLATE_RECORD, type Template } from './template.js';
import { WORKFLOW_SPEC_RECORD } from './workflow.js';
import { recordRules } from './supported-fields.js';

const INNER = record('Mutex', {
  name: field<string>(str()).required(),
  namespace: field<string>(str(), ok('a note')),
});
type Inner = RecordOf<typeof INNER.fields>;

const OUTER = record(
  'Synchronization',
  {
    mutex: ref<Inner>(INNER, 'one', 'one lock'),
    mutexes: ref<Inner[]>(INNER, 'list'),
    semaphore: ref<Inner>(INNER, 'one', undefined, { crd: 'open' }),
    semaphores: field<string>(str()).requiredByValidator(),
    legacy: untyped<boolean>(no('gone')),
  },
  { open: true },
);

describe('a record declared once', () => {
  it('derives its TypeScript type: required fields as declared, every other optional', () => {
    expectTypeOf<Inner>().toEqualTypeOf<{ name: string } & { namespace?: string }>();
    type Outer = RecordOf<typeof OUTER.fields>;
    expectTypeOf<Outer['semaphores']>().toEqualTypeOf<string>();
    expectTypeOf<Outer['mutexes']>().toEqualTypeOf<Inner[] | undefined>();
    // The real records: a template's name is required, its steps are groups of steps.
    expectTypeOf<Template['name']>().toEqualTypeOf<string>();
    expectTypeOf<NonNullable<Template['steps']>[number][number]['inline']>().toEqualTypeOf<Template | undefined>();
  });

  it('derives its CRD schema: typed fields, required ones listed, open records kept open', () => {
    expect(INNER.schema).toEqual({
      type: 'object',
      required: ['name'],
      properties: { name: { type: 'string' }, namespace: { type: 'string' } },
    });
    expect(OUTER.schema.properties!.mutex).toEqual(INNER.schema);
    expect(OUTER.schema.properties!.mutexes).toEqual({ type: 'array', items: INNER.schema });
    expect(OUTER.schema.properties!.semaphore).toEqual(openObject());
    // requiredByValidator: required in the type only; untyped: not in the CRD at all.
    expect(OUTER.schema.required).toBeUndefined();
    expect(OUTER.schema.properties).not.toHaveProperty('legacy');
    expect(OUTER.schema['x-kubernetes-preserve-unknown-fields']).toBe(true);
  });

  it('derives its catalogue rules: notes, refusals and the records a field walks into', () => {
    expect(INNER.rules).toEqual({ name: { status: 'supported' }, namespace: { status: 'supported', note: 'a note' } });
    expect(OUTER.rules.mutex).toEqual({ status: 'supported', record: 'Mutex', shape: 'one', note: 'one lock' });
    expect(OUTER.rules.mutexes).toEqual({ status: 'supported', record: 'Mutex', shape: 'list' });
    expect(OUTER.rules.legacy).toEqual({ status: 'refused', reason: 'gone' });
  });

  it('is the one source of the CRD and of the catalogue for the real records', () => {
    expect(TEMPLATE_RECORD.schema.required).toEqual(['name']);
    expect(Object.keys(recordRules('Template')).sort()).toEqual(Object.keys(TEMPLATE_RECORD.fields).sort());
    // WorkflowSpec types only the fields the CRD needs; the others are kept by the open node.
    const typed = Object.keys(WORKFLOW_SPEC_RECORD.schema.properties!);
    expect(typed).toContain('templates');
    expect(typed).not.toContain('hostNetwork');
    expect(recordRules('WorkflowSpec').hostNetwork).toEqual({ status: 'supported', note: 'passed to Kubernetes unchanged' });
  });
});

describe('a variant of a record', () => {
  it('keeps the type and schema and replaces the named rules', () => {
    const v = variant(INNER, 'SemaphoreRef', { namespace: no('not here') });
    expect(v.schema).toBe(INNER.schema);
    expect(v.rules).toEqual({ name: { status: 'supported' }, namespace: { status: 'refused', reason: 'not here' } });
    expect(INNER.rules.namespace).toEqual({ status: 'supported', note: 'a note' });
  });

  it('limits the catalogue to `only` fields', () => {
    expect(Object.keys(variant(INNER, 'SemaphoreRef', {}, ['name']).rules)).toEqual(['name']);
  });

  it('refuses a rule for a field the record does not have, naming both', () => {
    expect(() => variant(INNER, 'SemaphoreRef', { nope: ok() } as never)).toThrow('variant SemaphoreRef: Mutex has no field nope');
  });
});

it('a field of another record keeps its own schema object, so a change shows in both', () => {
  const f = field<boolean>(bool());
  expect(record('ContinueOn', { error: f }).schema.properties!.error).toBe(f.schema);
});
