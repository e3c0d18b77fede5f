import { describe, expect, it } from 'vitest';
import { LABEL_WORKFLOW, type Workflow } from '../api/index.js';
import { PODS } from '../kube/resource.js';
import { FakeKubeClient } from '../kube/testing/fake-kube-client.js';
import { PodLag, POD_LAG_LIMIT_MS, unseenPods } from './pod-lag.js';

const wf = (nodes: Record<string, { podName?: string; observed?: boolean; phase: string }>): Workflow =>
  ({ metadata: { name: 'wf', namespace: 'ns' }, status: { phase: 'Running', nodes } }) as unknown as Workflow;
const pod = (name: string) => ({ metadata: { name, namespace: 'ns', labels: { [LABEL_WORKFLOW]: 'wf' } } });

describe('the pod cache behind the status', () => {
  const running = wf({
    a: { podName: 'wf-a', observed: true, phase: 'Running' },
    b: { podName: 'wf-b', observed: true, phase: 'Succeeded' },
    c: { podName: 'wf-c', phase: 'Pending' },
    d: { podName: 'wf-d', observed: true, phase: 'Pending' },
  });

  it('looks only at running steps whose pod was seen', () => {
    expect(unseenPods(running, new Set())).toEqual(['wf-a', 'wf-d']);
    expect(unseenPods(running, new Set(['wf-a', 'wf-d']))).toEqual([]);
  });

  it('asks the API server nothing while the cache shows every such pod', async () => {
    const fake = new FakeKubeClient();
    const lag = new PodLag(fake);
    expect(await lag.behind(running, [pod('wf-a'), pod('wf-d')])).toEqual([]);
    expect(fake.callsOf('list')).toHaveLength(0);
  });

  it('waits while the API server has a pod the cache lacks, not once the pod is really gone, and not for ever', async () => {
    const fake = new FakeKubeClient();
    fake.seed(PODS, pod('wf-a'));
    const lag = new PodLag(fake);
    const t0 = 1_000_000;
    // wf-a exists (the cache is behind); wf-d is gone (deleted: the engine may say so).
    expect(await lag.behind(running, [], t0)).toEqual(['wf-a']);
    expect(await lag.behind(running, [], t0 + POD_LAG_LIMIT_MS - 1)).toEqual(['wf-a']);
    expect(await lag.behind(running, [], t0 + POD_LAG_LIMIT_MS + 1)).toEqual([]);
    expect(await lag.behind(running, [pod('wf-a')], t0 + POD_LAG_LIMIT_MS + 2)).toEqual([]);
    // Past the limit no list is made; the last call lists once more for wf-d, which is gone.
    expect(fake.callsOf('list')).toHaveLength(3);
  });
});
