/**
 * Workflow-level fields against the real API server, with the local pod runner as the kubelet:
 * spec.templateDefaults reaches the step pods (the template's own fields win), spec.retryStrategy
 * retries a template that has none, spec.dnsConfig is on the step pods, and spec.workflowMetadata
 * labels (literal and labelsFrom expressions) and annotations are on the workflow.
 */
import type { V1ConfigMap, V1Pod } from '@kubernetes/client-node';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LABEL_CONFIGMAP_TYPE, LABEL_WORKFLOW, type Workflow } from '../src/api/index.js';
import { startController, type RunningController } from '../src/controller/controller.js';
import type { KubeClient } from '../src/kube/client.js';
import { isNotFound } from '../src/kube/errors.js';
import { CONFIGMAPS, NODES, PERSISTENT_VOLUME_CLAIMS, PODS, WORKFLOWS } from '../src/kube/resource.js';
import { createLogger } from '../src/log/logger.js';
import { PodRunner } from '../src/runner/runner.js';
import { readYamlDocuments } from '../src/yaml/kube-yaml.js';
import { captureLogger, eventually, startRunnerBed, waitForCompletion, workflow, type RunnerBed } from './controller-harness.js';
import { adminKubeConfig } from './support/cluster.js';

let ns: string;
let client: KubeClient;
let controller: RunningController;
const { log } = captureLogger();

const podsOf = async (wf: string) => (await client.list<V1Pod>(PODS, { namespace: ns, labelSelector: `${LABEL_WORKFLOW}=${wf}` })).items;

let bed: RunnerBed;

beforeAll(async () => {
  bed = await startRunnerBed('wff');
  ({ ns, client } = bed);
  controller = await startController({ kubeConfig: adminKubeConfig(), namespace: ns, metricsPort: 0, workers: 2, log });
}, 180_000);

afterAll(async () => {
  await controller?.stop();
  await bed?.stop();
});

describe('workflow-level fields', () => {
  it('templateDefaults and dnsConfig reach the step pods; the template wins where it sets a field', async () => {
    await client.create(
      WORKFLOWS,
      ns,
      workflow('defaults', {
        entrypoint: 'main',
        dnsConfig: { options: [{ name: 'ndots', value: '2' }] },
        templateDefaults: {
          activeDeadlineSeconds: 300,
          container: { image: 'alpine:3', env: [{ name: 'FROM', value: 'defaults' }] },
        } as never,
        templates: [
          {
            name: 'main',
            steps: [
              [
                { name: 'a', template: 'plain' },
                { name: 'b', template: 'own' },
              ],
            ],
          },
          { name: 'plain', container: { command: ['sh', '-c', 'echo $FROM'] } as never },
          {
            name: 'own',
            activeDeadlineSeconds: 200,
            container: { image: 'alpine:3', command: ['sh', '-c', 'echo $FROM'], env: [{ name: 'FROM', value: 'own' }] },
          },
        ],
      }),
    );
    const done = await waitForCompletion(client, ns, 'defaults');
    expect(done.status?.phase).toBe('Succeeded');
    const results = Object.fromEntries(
      Object.values(done.status!.nodes!)
        .filter((n) => n.type === 'Pod')
        .map((n) => [n.displayName, n.outputs?.result]),
    );
    expect(results).toEqual({ a: 'defaults', b: 'own' });
    const pods = await podsOf('defaults');
    expect(pods.map((p) => p.spec!.activeDeadlineSeconds).sort()).toEqual([200, 300]);
    for (const p of pods) expect(p.spec!.dnsConfig).toEqual({ options: [{ name: 'ndots', value: '2' }] });
  });

  it('spec.retryStrategy retries a template without its own', async () => {
    await client.create(
      WORKFLOWS,
      ns,
      workflow('retried', {
        entrypoint: 'flaky',
        retryStrategy: { limit: 2 },
        templates: [{ name: 'flaky', container: { image: 'alpine:3', command: ['sh', '-c', 'exit 1'] } }],
      }),
    );
    const done = await waitForCompletion(client, ns, 'retried');
    expect(done.status?.phase).toBe('Failed');
    const attempts = Object.values(done.status!.nodes!).filter((n) => n.type === 'Pod');
    expect(attempts.length).toBe(3);
  });

  it('retryStrategy.affinity.nodeAntiAffinity runs the retry on another Kubernetes node than the failed attempt', async () => {
    // A second node beside the bed's runner: the first attempt may land on either.
    const second = new PodRunner({
      kubeConfig: adminKubeConfig(),
      dir: mkdtempSync(join(tmpdir(), 'plugflow-wff-second-')),
      nodeName: `second-${ns}`,
      namespace: ns,
      log: createLogger('runner', 'warn'),
    });
    await second.start();
    try {
      await client.create(
        WORKFLOWS,
        ns,
        workflow('elsewhere', {
          entrypoint: 'flaky',
          templates: [
            {
              name: 'flaky',
              retryStrategy: { limit: 1, affinity: { nodeAntiAffinity: {} } },
              container: { image: 'alpine:3', command: ['sh', '-c', '[ {{retries}} -ge 1 ]'] },
            },
          ],
        }),
      );
      const done = await waitForCompletion(client, ns, 'elsewhere');
      expect(done.status?.phase).toBe('Succeeded');
      const attempts = Object.values(done.status!.nodes!)
        .filter((n) => n.type === 'Pod')
        .sort((a, b) => a.name.localeCompare(b.name));
      expect(attempts.map((a) => a.phase)).toEqual(['Failed', 'Succeeded']);
      const pods = new Map((await podsOf('elsewhere')).map((p) => [p.metadata!.name!, p]));
      const [first, retry] = attempts.map((a) => pods.get(a.podName!)!);
      expect(attempts[0]!.hostNodeName).toBe(first!.spec!.nodeName);
      expect([`runner-${ns}`, `second-${ns}`]).toContain(first!.spec!.nodeName);
      expect(retry!.spec!.nodeName).not.toBe(first!.spec!.nodeName);
      expect(retry!.spec!.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms).toEqual([
        { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'NotIn', values: [first!.spec!.nodeName] }] },
      ]);
    } finally {
      await second.stop(1);
      await client.delete(NODES, undefined, `second-${ns}`).catch(() => {});
    }
  });

  it('workflowMetadata labels, labelsFrom and annotations are set on the workflow', async () => {
    await client.create(
      WORKFLOWS,
      ns,
      workflow('meta', {
        entrypoint: 'main',
        arguments: { parameters: [{ name: 'team', value: 'Blue' }] },
        workflowMetadata: {
          labels: { app: 'demo' },
          annotations: { note: 'set by plugflow' },
          labelsFrom: { team: { expression: 'lower(workflow.parameters.team)' } },
        },
        templates: [{ name: 'main', container: { image: 'alpine:3', command: ['true'] } }],
      }),
    );
    expect((await waitForCompletion(client, ns, 'meta')).status?.phase).toBe('Succeeded');
    const wf = await eventually(async () => {
      const w = await client.get<Workflow>(WORKFLOWS, ns, 'meta');
      return w.metadata.labels?.team ? w : undefined;
    }, 'the labels');
    expect(wf.metadata.labels).toMatchObject({ app: 'demo', team: 'blue' });
    expect(wf.metadata.annotations).toMatchObject({ note: 'set by plugflow' });
  });
});

describe("examples/workflow-fields (the peer's examples for these fields, API group adapted)", () => {
  const dir = join(import.meta.dirname, '..', 'examples', 'workflow-fields');
  const submit = async (file: string): Promise<string> => {
    const [doc] = readYamlDocuments(readFileSync(join(dir, file), 'utf8'), file) as Workflow[];
    return (await client.create<Workflow>(WORKFLOWS, ns, doc)).metadata.name!;
  };
  const exists = async (type: typeof WORKFLOWS, name: string) =>
    client.get<Workflow>(type, ns, name).then(
      (o) => o.metadata.deletionTimestamp === undefined,
      (err: unknown) => {
        if (isNotFound(err)) return false;
        throw err;
      },
    );

  it('covers every file', () => {
    expect(readdirSync(dir).sort()).toEqual([
      'configmap-parameters.yaml',
      'pod-gc.yaml',
      'template-defaults.yaml',
      'ttl.yaml',
      'volumes-pvc.yaml',
      'workflow-metadata.yaml',
    ]);
  });

  it('runs each, with the effect it shows', async () => {
    const names = Object.fromEntries(
      await Promise.all(
        ['pod-gc.yaml', 'template-defaults.yaml', 'ttl.yaml', 'volumes-pvc.yaml', 'workflow-metadata.yaml'].map(
          async (f) => [f, await submit(f)] as const,
        ),
      ),
    );
    const gc = await waitForCompletion(client, ns, names['pod-gc.yaml']!);
    expect(gc.status?.phase).toBe('Succeeded');
    await eventually(
      async () => ((await podsOf(gc.metadata.name!)).filter((p) => !p.metadata?.deletionTimestamp).length === 0 ? true : undefined),
      'pod-gc pods collected',
    );

    const td = await waitForCompletion(client, ns, names['template-defaults.yaml']!);
    expect(td.status?.phase).toBe('Succeeded');
    const attempts = Object.values(td.status!.nodes!)
      .filter((n) => n.type === 'Pod')
      .sort((x, y) => x.name.localeCompare(y.name));
    expect(attempts.map((n) => n.phase)).toEqual(['Failed', 'Succeeded']);
    expect(attempts[1]!.outputs?.result).toBe('hello on attempt 1');

    const vol = await waitForCompletion(client, ns, names['volumes-pvc.yaml']!);
    expect(vol.status?.phase).toBe('Succeeded');
    expect(Object.values(vol.status!.nodes!).find((n) => n.displayName === 'read')?.outputs?.result).toBe('hello from the claim');
    await eventually(
      async () => ((await exists(PERSISTENT_VOLUME_CLAIMS, `${vol.metadata.name}-workdir`)) ? undefined : true),
      'the claim deleted',
    );

    const md = await waitForCompletion(client, ns, names['workflow-metadata.yaml']!);
    expect(md.status?.phase).toBe('Succeeded');
    const labelled = await eventually(async () => {
      const w = await client.get<Workflow>(WORKFLOWS, ns, md.metadata.name!);
      return w.metadata.labels?.team ? w : undefined;
    }, 'the labels');
    expect(labelled.metadata.labels).toMatchObject({ example: 'workflow-metadata', team: 'platform' });

    const ttl = await waitForCompletion(client, ns, names['ttl.yaml']!);
    expect(ttl.status?.phase).toBe('Succeeded');
    await eventually(async () => ((await exists(WORKFLOWS, ttl.metadata.name!)) ? undefined : true), 'the ttl workflow deleted', 40_000);
  });
});

describe('parameters from ConfigMaps (valueFrom.configMapKeyRef)', () => {
  it('examples/workflow-fields/configmap-parameters.yaml: the ConfigMap and the workflow created together; values and the default reach the step', async () => {
    const [cm, wf] = readYamlDocuments(
      readFileSync(join(import.meta.dirname, '..', 'examples', 'workflow-fields', 'configmap-parameters.yaml'), 'utf8'),
      'configmap-parameters.yaml',
    ) as [V1ConfigMap, Workflow];
    // No pause between them: the controller looks up a named ConfigMap its informer has not seen yet.
    await client.create(CONFIGMAPS, ns, cm);
    const name = (await client.create<Workflow>(WORKFLOWS, ns, wf)).metadata.name!;
    const done = await waitForCompletion(client, ns, name);
    expect(done.status?.phase, done.status?.message).toBe('Succeeded');
    const pod = Object.values(done.status!.nodes!).find((n) => n.type === 'Pod');
    expect(pod?.outputs?.result).toBe('releasing stable to eu-west-1 x2');
    expect(pod?.inputs?.parameters?.map((p) => [p.name, p.value])).toEqual([
      ['channel', 'stable'],
      ['region', 'eu-west-1'],
      ['replicas', '2'],
    ]);
  });

  it('never reads an unlabelled ConfigMap: the workflow fails naming the parameter and the label, and no pod runs', async () => {
    await client.create(CONFIGMAPS, ns, { metadata: { name: 'private-settings' }, data: { token: 'not-for-workflows' } });
    await client.create(
      WORKFLOWS,
      ns,
      workflow('cm-private', {
        entrypoint: 'main',
        arguments: { parameters: [{ name: 'token', valueFrom: { configMapKeyRef: { name: 'private-settings', key: 'token' } } }] },
        templates: [{ name: 'main', container: { image: 'alpine:3', command: ['echo', '{{workflow.parameters.token}}'] } }],
      }),
    );
    const done = await waitForCompletion(client, ns, 'cm-private');
    expect(done.status?.phase).toBe('Failed');
    expect(done.status?.message).toBe(
      'spec.arguments.parameters[token].valueFrom.configMapKeyRef: ConfigMap "private-settings" was not found in the workflow\'s namespace with the label workflows.plugflow.io/configmap-type=Parameter (only such ConfigMaps are read), and the parameter has no default',
    );
    expect(JSON.stringify(done.status)).not.toContain('not-for-workflows');
    expect(await podsOf('cm-private')).toEqual([]);
  });

  it('a missing key without a default fails the step naming the input; optional gives ""', async () => {
    await client.create(CONFIGMAPS, ns, {
      metadata: { name: 'partial', labels: { [LABEL_CONFIGMAP_TYPE]: 'Parameter' } },
      data: { present: 'yes' },
    });
    await client.create(
      WORKFLOWS,
      ns,
      workflow('cm-missing-key', {
        entrypoint: 'main',
        templates: [
          {
            name: 'main',
            steps: [[{ name: 'opt', template: 'optional' }], [{ name: 'req', template: 'required' }]],
          },
          {
            name: 'optional',
            inputs: { parameters: [{ name: 'v', valueFrom: { configMapKeyRef: { name: 'partial', key: 'absent', optional: true } } }] },
            container: { image: 'alpine:3', command: ['echo', '[{{inputs.parameters.v}}]'] },
          },
          {
            name: 'required',
            inputs: { parameters: [{ name: 'v', valueFrom: { configMapKeyRef: { name: 'partial', key: 'absent' } } }] },
            container: { image: 'alpine:3', command: ['echo', '{{inputs.parameters.v}}'] },
          },
        ],
      }),
    );
    const done = await waitForCompletion(client, ns, 'cm-missing-key');
    expect(done.status?.phase).toBe('Error');
    const nodes = Object.values(done.status!.nodes!);
    expect(nodes.find((n) => n.displayName === 'opt')?.outputs?.result).toBe('[]');
    expect(nodes.find((n) => n.displayName === 'req')?.message).toContain(
      'spec.templates[required].inputs.parameters[v].valueFrom.configMapKeyRef: ConfigMap "partial" has no key "absent", and the parameter has no default',
    );
  });
});
