import { describe, expect, it } from 'vitest';
import type { Workflow } from '../api/index.js';
import { OperationRefused } from './errors.js';
import { applySubmitOptions, parseSourceKind, parseSubmitOptions } from './submit-from.js';
import { syncRequest } from './sync-limits.js';

const base: Workflow = {
  apiVersion: 'plugflow.io/v1alpha1',
  kind: 'Workflow',
  metadata: { generateName: 't-', namespace: 'ns', labels: { from: 'template' } },
  spec: { workflowTemplateRef: { name: 't' }, arguments: { parameters: [{ name: 'a', value: '1' }] } },
} as Workflow;

describe('submit --from', () => {
  it('knows every spelling of the kinds the peer accepts, and refuses others naming them', () => {
    expect(['WorkflowTemplate', 'workflowtemplates', 'wftmpl'].map(parseSourceKind)).toEqual(Array(3).fill('WorkflowTemplate'));
    expect(['ClusterWorkflowTemplate', 'cwftmpl'].map(parseSourceKind)).toEqual(Array(2).fill('ClusterWorkflowTemplate'));
    expect(['CronWorkflow', 'cronwf', 'cwf'].map(parseSourceKind)).toEqual(Array(3).fill('CronWorkflow'));
    expect(() => parseSourceKind('Workflow')).toThrow(/resourceKind "Workflow" cannot be submitted/);
    expect(() => parseSourceKind(undefined)).toThrow(OperationRefused);
  });

  it('applies the options: name over generateName, labels and annotations added, parameters set or added', () => {
    const wf = applySubmitOptions(
      base,
      parseSubmitOptions({
        name: 'given',
        labels: 'x=1, y=2',
        annotations: 'note=hi',
        parameters: ['a=2', 'b=new=x'],
        entryPoint: 'other',
        serviceAccount: 'runner',
        priority: 3,
      }),
    );
    expect(wf.metadata).toMatchObject({ name: 'given', labels: { from: 'template', x: '1', y: '2' }, annotations: { note: 'hi' } });
    expect(wf.metadata.generateName).toBeUndefined();
    expect(wf.spec).toMatchObject({ entrypoint: 'other', serviceAccountName: 'runner', priority: 3 });
    expect(wf.spec.arguments?.parameters).toEqual([
      { name: 'a', value: '2' },
      { name: 'b', value: 'new=x' },
    ]);
    expect(base.metadata.name).toBeUndefined(); // the source is not changed
  });

  it('refuses unknown or mistyped options, naming them', () => {
    expect(() => parseSubmitOptions({ colour: 'red' })).toThrow("submitOptions.colour is not supported by plugflow's submit");
    expect(() => parseSubmitOptions({ dryRun: 'yes' })).toThrow('submitOptions.dryRun must be true or false');
    expect(() => parseSubmitOptions({ parameters: 'a=b' })).toThrow('submitOptions.parameters must be a list of "name=value" strings');
    expect(() => parseSubmitOptions({ ownerReference: { kind: 'X' } })).toThrow(/ownerReference needs apiVersion, kind, name and uid/);
    expect(() => applySubmitOptions(base, { labels: 'novalue' })).toThrow('submitOptions.labels: "novalue" is not key=value');
    expect(parseSubmitOptions(undefined)).toEqual({});
  });
});

describe('sync limits', () => {
  it('takes the ConfigMap type in each form the peer sends it, and refuses the database type', () => {
    for (const type of [undefined, 0, '0', 'CONFIGMAP'])
      expect(syncRequest({ cmName: 'c', key: 'k', limit: 2, type }, true)).toEqual({ cmName: 'c', key: 'k', limit: 2 });
    expect(() => syncRequest({ cmName: 'c', key: 'k', limit: 2, type: 'DATABASE' }, true)).toThrow(/ConfigMaps only/);
  });

  it('names a bad key, a missing ConfigMap name and a limit below 1', () => {
    expect(() => syncRequest({ cmName: 'c', key: 'a/b' }, false)).toThrow(/key "a\/b" is not a ConfigMap key/);
    expect(() => syncRequest({ key: 'k' }, false)).toThrow(/cmName is required/);
    expect(() => syncRequest({ cmName: 'c', key: 'k', limit: 0 }, true)).toThrow(/limit must be a whole number of at least 1, got 0/);
    expect(syncRequest({ cmName: 'c', key: 'k', limit: '3' }, true).limit).toBe(3);
  });
});
