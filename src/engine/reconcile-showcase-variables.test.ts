/**
 * Every variable the peer's catalog example (`examples/variables-showcase.yaml`) uses, rendered
 * by the engine in a workflow of our own: workflow identity and metadata, creation time forms,
 * node context (`node.name`, `pod.name`, `steps.name`, `tasks.name`), inputs and output paths,
 * loop items, `retries` and `lastRetry.*` inside an attempt, references to earlier steps and
 * tasks (`hostNodeName`, `ip`, loop aggregates, artifacts), global outputs in the exit handler,
 * and the template metric variables.
 */
import { describe, expect, it } from 'vitest';
import type { Template, WorkflowSpec } from '../api/index.js';
import { emissionsOf, nodeMetricVariables } from './custom-metrics.js';
import { World } from './test-world.js';

const lines = (...names: string[]) => names.map((n) => `${n}={{${n}}}`);

const WORKFLOW_VARS = lines(
  'workflow.name',
  'workflow.namespace',
  'workflow.uid',
  'workflow.mainEntrypoint',
  'workflow.serviceAccountName',
  'workflow.priority',
  'workflow.creationTimestamp',
  'workflow.creationTimestamp.RFC3339',
  'workflow.creationTimestamp.s',
  'workflow.creationTimestamp.Y',
  'workflow.creationTimestamp.b',
  'workflow.creationTimestamp.I',
  'workflow.creationTimestamp.p',
  'workflow.scheduledTime',
  'workflow.annotations',
  'workflow.annotations.json',
  'workflow.annotations.team.example/owner',
  'workflow.labels',
  'workflow.labels.json',
  'workflow.labels.stage',
  'workflow.parameters',
  'workflow.parameters.json',
  'workflow.parameters.colour',
  'workflow.duration',
  'workflow.status',
  'node.name',
  'pod.name',
  'steps.name',
  'outputs.parameters.o.path',
  'outputs.artifacts.art.path',
);

const leaf = (name: string, extra: Partial<Template>, args: string[]): Template => ({
  name,
  ...extra,
  container: { image: 'alpine', command: ['echo'], args },
});

const spec: WorkflowSpec = {
  entrypoint: 'top',
  serviceAccountName: 'runner',
  priority: 3,
  onExit: 'bye',
  arguments: { parameters: [{ name: 'colour', value: 'red' }], artifacts: [{ name: 'seed', raw: { data: 'x' } }] },
  templates: [
    {
      name: 'top',
      inputs: { artifacts: [{ name: 'seed' }] },
      steps: [
        [
          { name: 'first', template: 'info' },
          { name: 'srv', template: 'srv' },
        ],
        [
          {
            name: 'loop',
            template: 'each',
            withItems: [{ k: 'a', v: '1' }],
            arguments: {
              parameters: [
                { name: 'p', value: '{{item.k}}-{{item.v}}' },
                { name: 'whole', value: '{{item}}' },
              ],
              artifacts: [{ name: 'got', from: '{{steps.first.outputs.artifacts.art}}' }],
            },
          },
        ],
        [
          {
            name: 'report',
            template: 'show',
            arguments: {
              parameters: [
                {
                  name: 'v',
                  value: [
                    ...['id', 'status', 'hostNodeName', 'startedAt', 'finishedAt', 'exitCode'].map((f) => `${f}={{steps.first.${f}}}`),
                    'result={{steps.first.outputs.result}}',
                    'param={{steps.first.outputs.parameters.o}}',
                    'ip={{steps.srv.ip}}',
                    'loop.result={{steps.loop.outputs.result}}',
                    'loop.parameters={{steps.loop.outputs.parameters}}',
                    'loop.e={{steps.loop.outputs.parameters.e}}',
                    'step={{steps.name}}',
                  ].join(' '),
                },
              ],
              artifacts: [{ name: 'fwd', from: '{{inputs.artifacts.seed}}' }],
            },
          },
        ],
        [{ name: 'graph', template: 'graph' }],
      ],
    },
    leaf(
      'info',
      {
        outputs: {
          parameters: [{ name: 'o', globalName: 'glob', valueFrom: { path: '/tmp/o' } }],
          artifacts: [{ name: 'art', path: '/tmp/art', globalName: 'gart' }],
        },
        metrics: {
          vendorP: [
            {
              name: 'info_seconds',
              help: 'h',
              labels: [
                { key: 'status', value: '{{status}}' },
                { key: 'code', value: '{{exitCode}}' },
                { key: 'param', value: '{{outputs.parameters.o}}' },
                { key: 'result', value: '{{outputs.result}}' },
                { key: 'cpu', value: '{{resourcesDuration.cpu}}' },
                { key: 'mem', value: '{{resourcesDuration.memory}}' },
              ],
              gauge: { value: '{{duration}}' },
            },
          ],
        },
      },
      WORKFLOW_VARS,
    ),
    { name: 'srv', daemon: true, container: { image: 'alpine' } },
    leaf(
      'each',
      {
        retryStrategy: { limit: 1 },
        inputs: { parameters: [{ name: 'p' }, { name: 'whole' }], artifacts: [{ name: 'got', path: '/in' }] },
        outputs: { parameters: [{ name: 'e', valueFrom: { path: '/tmp/e' } }] },
      },
      [
        ...lines('inputs.parameters', 'inputs.parameters.p', 'inputs.parameters.whole', 'inputs.artifacts.got.path', 'retries'),
        ...lines('lastRetry.status', 'lastRetry.exitCode', 'lastRetry.duration', 'lastRetry.message', 'pod.name'),
        ...lines('outputs.parameters.e.path'),
      ],
    ),
    leaf('show', { inputs: { parameters: [{ name: 'v' }], artifacts: [{ name: 'fwd', path: '/fwd' }] } }, ['{{inputs.parameters.v}}']),
    {
      name: 'graph',
      dag: {
        tasks: [
          { name: 'a', template: 'task-leaf' },
          { name: 'd', template: 'srv' },
          {
            name: 'b',
            template: 'show',
            depends: 'a && d',
            arguments: {
              parameters: [
                {
                  name: 'v',
                  value:
                    'id={{tasks.a.id}} status={{tasks.a.status}} host={{tasks.a.hostNodeName}} ip={{tasks.d.ip}} exit={{tasks.a.exitCode}} result={{tasks.a.outputs.result}} param={{tasks.a.outputs.parameters.e}}',
                },
              ],
              artifacts: [{ name: 'fwd', from: '{{tasks.a.outputs.artifacts.bundle}}' }],
            },
          },
          { name: 'c', template: 'task-leaf', depends: 'b', withParam: '["x"]' },
          {
            name: 'gather',
            template: 'show',
            depends: 'c',
            arguments: {
              parameters: [
                { name: 'v', value: '{{tasks.c.outputs.result}} {{tasks.c.outputs.parameters}} {{tasks.c.outputs.parameters.e}}' },
              ],
              artifacts: [{ name: 'fwd', from: '{{tasks.a.outputs.artifacts.bundle}}' }],
            },
          },
        ],
      },
    },
    leaf(
      'task-leaf',
      {
        outputs: { parameters: [{ name: 'e', valueFrom: { path: '/tmp/e' } }], artifacts: [{ name: 'bundle', path: '/tmp/b' }] },
      },
      ['tasks.name={{tasks.name}}'],
    ),
    {
      name: 'bye',
      steps: [
        [
          {
            name: 'last',
            template: 'show',
            arguments: {
              parameters: [
                {
                  name: 'v',
                  value: '{{workflow.status}}|{{workflow.duration}}|{{workflow.failures}}|{{workflow.outputs.parameters.glob}}',
                },
              ],
              artifacts: [{ name: 'fwd', from: '{{workflow.outputs.artifacts.gart}}' }],
            },
          },
        ],
      ],
    },
  ],
};

function world(): World {
  const w = new World(structuredClone(spec), { start: '2024-03-05T14:00:00Z' });
  w.workflow.metadata = {
    ...w.workflow.metadata,
    creationTimestamp: '2024-03-05T13:04:05Z',
    labels: { stage: 'dev', app: 'demo' },
    annotations: { 'team.example/owner': 'ops', 'workflows.plugflow.io/scheduled-time': '2024-03-05T13:00:00Z' },
  };
  return w;
}

/** Runs every pod that was just created: daemons become ready, others succeed with their declared outputs. */
function runPods(w: World, fail?: string): void {
  for (const pod of w.pods.values()) {
    if (pod.phase !== 'Pending') continue;
    const t = w.created.get(pod.podName)!.template;
    pod.hostNodeName = 'node-7';
    pod.podIP = '10.0.0.9';
    if (t.daemon) {
      pod.phase = 'Running';
      pod.ready = true;
      continue;
    }
    if (fail && pod.podName === fail) {
      pod.phase = 'Failed';
      pod.message = 'boom';
      pod.outputs = { exitCode: '3' };
      continue;
    }
    pod.phase = 'Succeeded';
    pod.outputs = {
      exitCode: '0',
      result: `r-${t.name}`,
      parameters: (t.outputs?.parameters ?? []).map((p) => ({ name: p.name, value: `v-${p.name}` })),
      artifacts: (t.outputs?.artifacts ?? []).map((a) => ({ name: a.name, path: a.path, vendorAObject: { key: `k/${a.name}` } })),
    };
  }
}

function argsOf(w: World, node: string): string[] {
  return w.created.get(w.node(node).podName!)!.template.container!.args!;
}

describe('the variables of the peer catalog example', () => {
  it('renders every one of them', () => {
    const w = world();
    w.reconcile();
    const first = w.node('first');
    expect(argsOf(w, 'first')).toEqual([
      'workflow.name=wf',
      'workflow.namespace=ns',
      'workflow.uid=uid-1',
      'workflow.mainEntrypoint=top',
      'workflow.serviceAccountName=runner',
      'workflow.priority=3',
      'workflow.creationTimestamp=2024-03-05T13:04:05Z',
      'workflow.creationTimestamp.RFC3339=2024-03-05T13:04:05Z',
      'workflow.creationTimestamp.s=1709643845',
      'workflow.creationTimestamp.Y=2024',
      'workflow.creationTimestamp.b=Mar',
      'workflow.creationTimestamp.I=01',
      'workflow.creationTimestamp.p=PM',
      'workflow.scheduledTime=2024-03-05T13:00:00Z',
      'workflow.annotations={"team.example/owner":"ops","workflows.plugflow.io/scheduled-time":"2024-03-05T13:00:00Z"}',
      'workflow.annotations.json={"team.example/owner":"ops","workflows.plugflow.io/scheduled-time":"2024-03-05T13:00:00Z"}',
      'workflow.annotations.team.example/owner=ops',
      'workflow.labels={"app":"demo","stage":"dev"}',
      'workflow.labels.json={"app":"demo","stage":"dev"}',
      'workflow.labels.stage=dev',
      'workflow.parameters=[{"name":"colour","value":"red"}]',
      'workflow.parameters.json=[{"name":"colour","value":"red"}]',
      'workflow.parameters.colour=red',
      'workflow.duration=0.000000',
      'workflow.status=Running',
      'node.name=wf[0].first',
      `pod.name=${first.podName}`,
      'steps.name=first',
      'outputs.parameters.o.path=/tmp/o',
      'outputs.artifacts.art.path=/tmp/art',
    ]);

    runPods(w);
    w.reconcile();
    const attempt0 = w.node('loop(0:k:a,v:1)(0)');
    runPods(w, attempt0.podName);
    w.advance(5);
    w.reconcile();
    // The second attempt sees the first as lastRetry; the first saw the peer's first-attempt values.
    const lastRetry = (n: string) => argsOf(w, n).filter((a) => a.startsWith('lastRetry.') || a.startsWith('retries'));
    expect(lastRetry('loop(0:k:a,v:1)(0)')).toEqual([
      'retries=0',
      'lastRetry.status=',
      'lastRetry.exitCode=0',
      'lastRetry.duration=0',
      'lastRetry.message=',
    ]);
    expect(lastRetry('loop(0:k:a,v:1)(1)')).toEqual([
      'retries=1',
      'lastRetry.status=Failed',
      'lastRetry.exitCode=3',
      'lastRetry.duration=5',
      'lastRetry.message=boom',
    ]);
    expect(argsOf(w, 'loop(0:k:a,v:1)(1)')).toEqual([
      'inputs.parameters=[{"name":"p","value":"a-1"},{"name":"whole","value":"{\\"k\\":\\"a\\",\\"v\\":\\"1\\"}"}]',
      'inputs.parameters.p=a-1',
      'inputs.parameters.whole={"k":"a","v":"1"}',
      'inputs.artifacts.got.path=/in',
      ...lastRetry('loop(0:k:a,v:1)(1)'),
      `pod.name=${w.node('loop(0:k:a,v:1)(1)').podName}`,
      'outputs.parameters.e.path=/tmp/e',
    ]);

    for (let i = 0; i < 8; i++) {
      runPods(w);
      w.reconcile();
    }
    expect(w.status.phase).toBe('Succeeded');
    expect(argsOf(w, 'report')).toEqual([
      [
        `id=${first.id} status=Succeeded hostNodeName=node-7 startedAt=${first.startedAt} finishedAt=${w.node('first').finishedAt} exitCode=0`,
        'result=r-info param=v-o ip=10.0.0.9 loop.result=["r-each"] loop.parameters=[{"e":"v-e"}] loop.e=["v-e"] step=report',
      ].join(' '),
    ]);
    expect(w.node('report').inputs?.artifacts?.[0]).toMatchObject({ name: 'fwd', raw: { data: 'x' } });
    const a = w.node('a');
    expect(argsOf(w, 'a')).toEqual(['tasks.name=a']);
    expect(argsOf(w, 'b')).toEqual([`id=${a.id} status=Succeeded host=node-7 ip=10.0.0.9 exit=0 result=r-task-leaf param=v-e`]);
    expect(w.node('b').inputs?.artifacts?.[0]).toMatchObject({ name: 'fwd', vendorAObject: { key: 'k/bundle' } });
    expect(argsOf(w, 'gather')).toEqual(['["r-task-leaf"] [{"e":"v-e"}] ["v-e"]']);
    const [status, duration, failures, glob] = argsOf(w, 'last')[0]!.split('|');
    expect([status, glob]).toEqual(['Succeeded', 'v-o']);
    expect(JSON.parse(failures!)).toEqual([expect.objectContaining({ displayName: 'loop(0:k:a,v:1)(0)', message: 'boom' })]);
    expect(duration).toMatch(/^\d+\.\d{6}$/);
    expect(w.node('last').inputs?.artifacts?.[0]).toMatchObject({ name: 'fwd', vendorAObject: { key: 'k/art' } });

    // Template metrics: status, exitCode, outputs, resourcesDuration, duration.
    const info = spec.templates!.find((t) => t.name === 'info')!;
    const vars = nodeMetricVariables(w.node('first'), w.nowMs, info);
    const { emissions } = emissionsOf(info.metrics, 'info.metrics', vars, { startMs: 0, endMs: 1000 }, true);
    expect(emissions[0]).toMatchObject({
      labels: { status: 'Succeeded', code: '0', param: 'v-o', result: 'r-info', cpu: '0', mem: '0' },
    });
  });
});
