import { describe, expect, it } from 'vitest';
import { FieldError, Issues, ValidationError } from './field-error.js';
import { FieldPath, fieldText } from './field-path.js';

describe('FieldPath', () => {
  it('writes paths the way they look in YAML', () => {
    const tpl = FieldPath.of('spec').child('templates').index(2);
    expect(tpl.child('plugin').toString()).toBe('spec.templates[2].plugin');
    expect(tpl.child('dag').child('tasks').index(0).child('name').toString()).toBe('spec.templates[2].dag.tasks[0].name');
    expect(FieldPath.of('metadata').child('labels').key('app.kubernetes.io/name').toString()).toBe(
      'metadata.labels["app.kubernetes.io/name"]',
    );
    expect(FieldPath.of('spec').child('tasks').child('node-1').toString()).toBe('spec.tasks.node-1');
    expect(FieldPath.of('spec').child('tasks').child('a.b').toString()).toBe('spec.tasks["a.b"]');
  });

  it('starts from nothing when asked', () => {
    expect(FieldPath.of().isEmpty()).toBe(true);
    expect(FieldPath.of().toString()).toBe('<root>');
    expect(FieldPath.of().child('spec').toString()).toBe('spec');
    expect(fieldText('x.y')).toBe('x.y');
  });
});

describe('Issues', () => {
  it('collects field errors and reports them all at once', () => {
    const issues = new Issues();
    expect(issues.ok).toBe(true);
    issues.add('spec.entrypoint', 'is required');
    const value = issues.check(() => {
      throw new FieldError('spec.templates[0].name', 'is required');
    });
    expect(value).toBeUndefined();
    expect(issues.check(() => 42)).toBe(42);
    expect(issues.ok).toBe(false);
    expect(issues.all.map((i) => i.field)).toEqual(['spec.entrypoint', 'spec.templates[0].name']);
    expect(() => issues.throwIfAny('Workflow default/hello')).toThrow(
      'Workflow default/hello is invalid: spec.entrypoint is required; spec.templates[0].name is required',
    );
  });

  it('flattens nested validation errors and lets other errors escape', () => {
    const issues = new Issues();
    issues.check(() => {
      throw new ValidationError('inner', [new FieldError('a', 'is bad'), new FieldError('b', 'is worse')]);
    });
    expect(issues.all.map((i) => i.message)).toEqual(['a is bad', 'b is worse']);
    expect(() => issues.check(() => JSON.parse('{'))).toThrow(SyntaxError);
  });

  it('does not throw when nothing was found', () => {
    expect(() => new Issues().throwIfAny('x')).not.toThrow();
  });
});
