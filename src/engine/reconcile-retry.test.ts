import { describe, expect, it } from 'vitest';
import type { RetryStrategy, Template } from '../api/index.js';
import { World } from './test-world.js';

function retried(retryStrategy: RetryStrategy, extra: Partial<Template> = {}): World {
  return new World({
    entrypoint: 'main',
    templates: [
      { name: 'main', steps: [[{ name: 'try', template: 'flaky' }]] },
      { name: 'flaky', retryStrategy, container: { image: 'alpine', args: ['attempt {{retries}}'] }, ...extra },
    ],
  });
}

describe('retryStrategy', () => {
  it('retries until an attempt succeeds and takes its outputs', () => {
    const w = retried({ limit: 3 });
    w.reconcile();
    const retry = w.node('try');
    expect(retry.type).toBe('Retry');
    expect(w.runningPods()).toEqual(['try(0)']);
    expect(w.created.get(w.pod('try(0)').podName)!.template.container?.args).toEqual(['attempt 0']);
    w.failPod('try(0)');
    w.reconcile();
    expect(w.runningPods()).toEqual(['try(1)']);
    expect(w.created.get(w.pod('try(1)').podName)!.template.container?.args).toEqual(['attempt 1']);
    w.succeedPod('try(1)', { result: 'ok' });
    w.reconcile();
    expect(w.node('try')).toMatchObject({ phase: 'Succeeded', outputs: { result: 'ok', exitCode: '0' } });
    expect(w.node('try').children).toEqual([w.node('try(0)').id, w.node('try(1)').id]);
    expect(w.node('try(1)').retryAttempt).toBe(1);
    expect(w.status.phase).toBe('Succeeded');
  });

  it('nodeAntiAffinity keeps each retry off the Kubernetes nodes the failed attempts ran on', () => {
    const zone = { key: 'zone', operator: 'In', values: ['a'] };
    const w = retried(
      { limit: 2, affinity: { nodeAntiAffinity: {} } },
      {
        affinity: {
          nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [zone] }] } },
        },
      },
    );
    const terms = (attempt: string) =>
      w.created.get(w.pod(attempt).podName)!.template.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution
        ?.nodeSelectorTerms;
    w.reconcile();
    expect(terms('try(0)')).toEqual([{ matchExpressions: [zone] }]);
    w.pod('try(0)').hostNodeName = 'node-b';
    w.failPod('try(0)');
    w.reconcile();
    expect(w.node('try(0)').hostNodeName).toBe('node-b');
    const avoid = (...hosts: string[]) => ({ key: 'kubernetes.io/hostname', operator: 'NotIn', values: hosts });
    expect(terms('try(1)')).toEqual([{ matchExpressions: [zone, avoid('node-b')] }]);
    w.pod('try(1)').hostNodeName = 'node-a';
    w.failPod('try(1)');
    w.reconcile();
    expect(terms('try(2)')).toEqual([{ matchExpressions: [zone, avoid('node-a', 'node-b')] }]);

    const plain = retried({ limit: 1 });
    plain.reconcile();
    plain.pod('try(0)').hostNodeName = 'node-b';
    plain.failPod('try(0)');
    plain.reconcile();
    expect(plain.created.get(plain.pod('try(1)').podName)!.template.affinity).toBeUndefined();
  });

  it('fails when retries are exhausted, with the last message', () => {
    const w = retried({ limit: 1 });
    w.reconcile();
    w.failPod('try(0)', 'first');
    w.reconcile();
    w.failPod('try(1)', 'second');
    w.reconcile();
    expect(w.node('try')).toMatchObject({ phase: 'Failed', message: 'No more retries left (1): second' });
    expect(w.created.size).toBe(2);
    expect(w.status).toMatchObject({ phase: 'Failed', message: 'step "try" failed: No more retries left (1): second' });
  });

  it('retries only the outcomes its policy names', () => {
    const onError = retried({ limit: 2, retryPolicy: 'OnError' });
    onError.reconcile();
    onError.failPod('try(0)');
    onError.reconcile();
    expect(onError.node('try').phase).toBe('Failed');
    expect(onError.created.size).toBe(1);

    const always = retried({ limit: 2, retryPolicy: 'Always' });
    always.reconcile();
    always.pod('try(0)').phase = 'Deleted';
    always.reconcile();
    expect(always.runningPods()).toEqual(['try(1)']);

    const onFailure = retried({ limit: 2 });
    onFailure.reconcile();
    onFailure.pod('try(0)').phase = 'Deleted';
    onFailure.reconcile();
    expect(onFailure.node('try')).toMatchObject({ phase: 'Error', message: 'pod deleted' });
  });

  it('waits duration * factor^n between attempts and asks to be requeued', () => {
    const w = retried({ limit: 3, backoff: { duration: '10s', factor: 2 } });
    w.reconcile();
    w.advance(5);
    w.failPod('try(0)');
    w.reconcile();
    expect(w.node('try')).toMatchObject({ phase: 'Running', message: 'Backoff for 10s' });
    expect(w.requeueAt).toBe('2024-01-01T00:00:15.000Z');
    expect(w.runningPods()).toEqual([]);
    w.advance(10);
    w.reconcile();
    expect(w.runningPods()).toEqual(['try(1)']);
    w.failPod('try(1)');
    w.reconcile();
    expect(w.node('try').message).toBe('Backoff for 20s');
    expect(w.requeueAt).toBe('2024-01-01T00:00:35.000Z');
    w.advance(19);
    w.reconcile();
    expect(w.runningPods()).toEqual([]);
    w.advance(1);
    w.reconcile();
    expect(w.runningPods()).toEqual(['try(2)']);
  });

  it('caps the growing wait at backoff.cap (the peer example retry-backoff.yaml)', () => {
    const w = retried({ limit: 10, backoff: { duration: '10s', factor: '3', cap: '15' } });
    w.reconcile();
    w.failPod('try(0)');
    w.reconcile();
    expect(w.node('try').message).toBe('Backoff for 10s');
    w.advance(10);
    w.reconcile();
    w.failPod('try(1)');
    w.reconcile();
    expect(w.node('try').message).toBe('Backoff for 15s');
  });

  it('gives up when the backoff would pass maxDuration', () => {
    const w = retried({ limit: 10, backoff: { duration: '30', maxDuration: '1m' } });
    w.reconcile();
    w.advance(20);
    w.failPod('try(0)');
    w.reconcile();
    w.advance(30);
    w.reconcile();
    w.advance(5);
    w.failPod('try(1)', 'again');
    w.reconcile();
    expect(w.node('try')).toMatchObject({ phase: 'Failed', message: 'Backoff would exceed max duration limit: again' });
  });

  it('stops when the expression over lastRetry says so', () => {
    const w = retried({ limit: 5, retryPolicy: 'Always', expression: 'lastRetry.exitCode != "2" && asInt(retries) < 3' });
    w.reconcile();
    w.failPod('try(0)', 'exit 1', '1');
    w.reconcile();
    expect(w.runningPods()).toEqual(['try(1)']);
    w.failPod('try(1)', 'exit 2', '2');
    w.reconcile();
    expect(w.node('try')).toMatchObject({ phase: 'Failed', message: 'retryStrategy.expression is false: exit 2' });
  });

  it('reports a broken expression instead of retrying', () => {
    const w = retried({ limit: 5, expression: 'lastRetry.exitCode' });
    w.reconcile();
    w.failPod('try(0)');
    w.reconcile();
    expect(w.node('try').phase).toBe('Failed');
    expect(w.node('try').message).toMatch(
      /^spec\.templates\[flaky\]\.retryStrategy\.expression: retry expression must evaluate to a boolean/,
    );
  });

  it('renders tags in the expression: inputs as numbers, quoted strings, workflow parameters', () => {
    const w = new World({
      entrypoint: 'main',
      arguments: { parameters: [{ name: 'stop', value: 'exit 7' }] },
      templates: [
        { name: 'main', steps: [[{ name: 'try', template: 'flaky', arguments: { parameters: [{ name: 'max-code', value: '5' }] } }]] },
        {
          name: 'flaky',
          inputs: { parameters: [{ name: 'max-code' }] },
          retryStrategy: {
            limit: 5,
            expression:
              "asInt(lastRetry.exitCode) <= {{inputs.parameters.max-code}} && lastRetry.message != '{{workflow.parameters.stop}}'",
          },
          container: { image: 'alpine' },
        },
      ],
    });
    w.reconcile();
    expect(w.status.phase).toBe('Running'); // the validator used to refuse the tag
    w.failPod('try(0)', 'exit 3', '3');
    w.reconcile();
    expect(w.runningPods()).toEqual(['try(1)']);
    w.failPod('try(1)', 'exit 6', '6');
    w.reconcile();
    expect(w.node('try')).toMatchObject({ phase: 'Failed', message: 'retryStrategy.expression is false: exit 6' });
  });

  it("accepts the peer documentation's form: the whole expression as one {{=…}} tag", () => {
    const w = retried({ limit: 5, retryPolicy: 'Always', expression: '{{=asInt(lastRetry.exitCode) < 2}}' });
    w.reconcile();
    expect(w.status.phase).toBe('Running');
    w.failPod('try(0)', 'exit 1', '1');
    w.reconcile();
    expect(w.runningPods()).toEqual(['try(1)']);
    w.failPod('try(1)', 'exit 2', '2');
    w.reconcile();
    expect(w.node('try')).toMatchObject({ phase: 'Failed', message: 'retryStrategy.expression is false: exit 2' });
  });

  it('keeps a tag value from rewriting the expression', () => {
    const w = new World({
      entrypoint: 'main',
      arguments: { parameters: [{ name: 'status', value: 'x" || true || "' }] },
      templates: [
        { name: 'main', steps: [[{ name: 'try', template: 'flaky' }]] },
        {
          name: 'flaky',
          retryStrategy: { limit: 5, expression: 'lastRetry.status == "{{workflow.parameters.status}}"' },
          container: { image: 'alpine' },
        },
      ],
    });
    w.reconcile();
    w.failPod('try(0)');
    w.reconcile();
    expect(w.node('try')).toMatchObject({ phase: 'Failed', message: 'retryStrategy.expression is false: Error (exit code 1)' });
  });

  it('gives lastRetry.duration in whole seconds, usable with asInt', () => {
    const w = retried({ limit: 5, expression: 'asInt(lastRetry.duration) < 10 && lastRetry.duration == "{{lastRetry.duration}}"' });
    w.reconcile();
    w.advance(4.7);
    w.failPod('try(0)');
    w.reconcile();
    expect(w.runningPods()).toEqual(['try(1)']);
    w.advance(12.2);
    w.failPod('try(1)');
    w.reconcile();
    expect(w.node('try')).toMatchObject({ phase: 'Failed', message: 'retryStrategy.expression is false: Error (exit code 1)' });
  });

  it('refuses an expression that is broken once its tags stand for values, at validation', () => {
    const w = retried({ limit: 5, expression: 'asInt(lastRetry.exitCode) > {{workflow.name}} &&' });
    w.reconcile();
    expect(w.status.phase).toBe('Failed');
    expect(w.status.message).toMatch(/^invalid spec: spec\.templates\[flaky\]\.retryStrategy\.expression is not a valid expression/);
  });

  it('takes limit from an input parameter', () => {
    const w = new World({
      entrypoint: 'main',
      arguments: { parameters: [{ name: 'n', value: '1' }] },
      templates: [
        {
          name: 'main',
          inputs: { parameters: [{ name: 'n' }] },
          retryStrategy: { limit: '{{inputs.parameters.n}}' },
          container: { image: 'alpine' },
        },
      ],
    });
    w.reconcile();
    w.failPod('wf(0)');
    w.reconcile();
    w.failPod('wf(1)');
    w.reconcile();
    expect(w.node('wf').message).toBe('No more retries left (1): Error (exit code 1)');
  });

  it('retries a whole steps template', () => {
    const w = new World({
      entrypoint: 'main',
      templates: [
        { name: 'main', retryStrategy: { limit: 1 }, steps: [[{ name: 'a', template: 'leaf' }]] },
        { name: 'leaf', container: { image: 'alpine' } },
      ],
    });
    w.reconcile();
    expect(w.node('wf(0)').type).toBe('Steps');
    w.failPod('wf(0)[0].a');
    w.reconcile();
    expect(w.runningPods()).toEqual(['a']);
    expect(w.nodesNamed('wf(1)[0].a')).toHaveLength(1);
    w.succeedAll();
    w.reconcile();
    expect(w.status.phase).toBe('Succeeded');
  });
});
