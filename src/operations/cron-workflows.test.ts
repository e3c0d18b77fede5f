import { describe, expect, it } from 'vitest';
import type { KubeClient } from '../kube/client.js';
import { CronWorkflows } from './cron-workflows.js';
import { OperationRefused } from './errors.js';

// checked() makes no API call: a client that would fail if it were used.
const crons = new CronWorkflows({} as KubeClient, 'team');

const cron = (workflowSpec: unknown) => ({
  metadata: { name: 'nightly' },
  spec: { schedules: ['0 3 * * *'], workflowSpec },
});

describe('CronWorkflows.checked', () => {
  it('refuses every static error a Workflow create would refuse, naming the field, not only refused fields', () => {
    const bad = cron({
      entrypoint: 'main',
      templates: [
        { name: 'main', steps: [[{ name: 'a', template: 'echo' }]], nodeSelector: { disk: 'ssd' } },
        { name: 'echo', container: { image: 'alpine', command: ['echo'] } },
      ],
    });
    expect(() => crons.checked(bad)).toThrow(OperationRefused);
    expect(() => crons.checked(bad)).toThrow(/spec\.workflowSpec: spec\.templates\[main\]\.nodeSelector/);
    expect(() => crons.checked(cron({ entrypoint: 'nope', templates: [{ name: 'main', suspend: {} }] }))).toThrow(
      /spec\.workflowSpec: spec\.entrypoint names template "nope", which does not exist/,
    );
  });

  it('leaves references to WorkflowTemplates to the run: one may be created after the CronWorkflow', () => {
    const ok = crons.checked(
      cron({ entrypoint: 'main', templates: [{ name: 'main', steps: [[{ name: 'a', templateRef: { name: 'later', template: 't' } }]] }] }),
    );
    expect(ok).toMatchObject({
      apiVersion: 'plugflow.io/v1alpha1',
      kind: 'CronWorkflow',
      metadata: { name: 'nightly', namespace: 'team' },
    });
    expect(crons.checked(cron({ workflowTemplateRef: { name: 'later' } })).spec.workflowSpec).toEqual({
      workflowTemplateRef: { name: 'later' },
    });
  });
});

describe('CronWorkflows.checked: the cost of a schedule list is bounded', () => {
  it('refuses more than 20 schedules, naming the field and the limit, without parsing them', () => {
    const many = {
      metadata: { name: 'flood' },
      spec: {
        schedules: Array.from({ length: 10_000 }, (_, i) => `${i % 60} * * * *`),
        workflowSpec: { entrypoint: 'main', templates: [{ name: 'main', suspend: {} }] },
      },
    };
    const t0 = performance.now();
    expect(() => crons.checked(many)).toThrow(
      /spec\.schedules: at most 20 schedules \(with spec\.schedule\) are allowed, this CronWorkflow has 10000/,
    );
    expect(performance.now() - t0).toBeLessThan(1000);
  });
});

describe('CronWorkflows.update', () => {
  it('checks like create, refuses another name than the path, and replaces with the given resourceVersion', async () => {
    const replaced: unknown[] = [];
    const kube = { replace: (_t: unknown, _ns: string, _name: string, obj: unknown) => (replaced.push(obj), Promise.resolve(obj)) };
    const c = new CronWorkflows(kube as unknown as KubeClient, 'team');
    const spec = { entrypoint: 'main', templates: [{ name: 'main', suspend: {} }] };
    expect(() => c.update('other', cron(spec))).toThrow(/metadata\.name "nightly" differs from the name in the path/);
    expect(() => c.update('nightly', cron({ entrypoint: 'nope', templates: [] }))).toThrow(/spec\.workflowSpec/);
    expect(replaced).toEqual([]);
    const given = { ...cron(spec), metadata: { name: 'nightly', resourceVersion: '42' } };
    await c.update('nightly', given);
    expect(replaced).toEqual([expect.objectContaining({ metadata: { name: 'nightly', namespace: 'team', resourceVersion: '42' } })]);
  });
});
