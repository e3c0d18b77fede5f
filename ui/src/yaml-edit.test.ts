import { describe, expect, it } from 'vitest';
import { CONFLICT, editableText, parseEdited, saveFailure } from './yaml-edit.js';

describe('editing an object as YAML', () => {
  it('starts from the object without its status and managed fields, keeping its resourceVersion', () => {
    const text = editableText({
      apiVersion: 'plugflow.io/v1alpha1',
      kind: 'CronWorkflow',
      metadata: { name: 'nightly', resourceVersion: '42', managedFields: [{ manager: 'x' }] },
      spec: { schedule: '0 3 * * *' },
      status: { active: [] },
    });
    expect(text).toContain('resourceVersion: "42"');
    expect(text).not.toContain('managedFields');
    expect(text).not.toContain('status');
    expect(parseEdited(text)).toEqual({
      object: {
        apiVersion: 'plugflow.io/v1alpha1',
        kind: 'CronWorkflow',
        metadata: { name: 'nightly', resourceVersion: '42' },
        spec: { schedule: '0 3 * * *' },
      },
    });
  });

  it('writes a string YAML 1.1 reads as a boolean quoted, so it is read back (as kubectl reads it) unchanged', () => {
    const obj = {
      kind: 'WorkflowTemplate',
      metadata: { name: 't' },
      spec: {
        arguments: {
          parameters: [
            { name: 'on', value: 'yes' },
            { name: 'mode', value: '0755' },
          ],
        },
      },
    };
    expect(parseEdited(editableText(obj))).toEqual({ object: obj });
  });

  it('says when the text is not one object', () => {
    expect(parseEdited('a: [')).toMatchObject({ error: expect.stringMatching(/^The text is not YAML/) });
    expect(parseEdited('- a')).toEqual({ error: 'The text must be one object (apiVersion, kind, metadata, spec).' });
    expect(parseEdited('a: 1\n---\nb: 2')).toMatchObject({ error: expect.stringMatching(/2 YAML documents/) });
  });

  it('tells a conflict (reload) from a refusal (the server names the field)', () => {
    expect(saveFailure(409, 'the object has been modified')).toEqual({
      message: `${CONFLICT} (the object has been modified)`,
      conflict: true,
    });
    expect(saveFailure(400, 'CronWorkflow ns/x is invalid: spec.schedule: bad')).toEqual({
      message: 'Not saved: CronWorkflow ns/x is invalid: spec.schedule: bad',
      conflict: false,
    });
  });
});
