/**
 * The workflows of ui-peer-features.test.ts (kept here so the suite stays readable).
 */
import { GROUP, VERSION, type Workflow } from '../../src/api/index.js';

export const API = `${GROUP}/${VERSION}`;
export const CREATOR = 'workflows.plugflow.io/creator';
export const echo = (name: string, script: string, extra: Record<string, unknown> = {}) => ({
  name,
  ...extra,
  container: { image: 'alpine:3.20', command: ['sh', '-c', script] },
});
export const workflow = (name: string, spec: Record<string, unknown>, metadata: Record<string, unknown> = {}): Workflow =>
  ({ apiVersion: API, kind: 'Workflow', metadata: { name, ...metadata }, spec }) as unknown as Workflow;

/** Two steps that log, then a loop of 14 pod-less items (collapsed in the graph). */
export const params = workflow(
  'params',
  {
    entrypoint: 'main',
    arguments: {
      parameters: [
        { name: 'who', value: 'Ada' },
        { name: 'mood', value: 'calm' },
      ],
    },
    templates: [
      {
        name: 'main',
        steps: [
          [{ name: 'fetch', template: 'fetch' }],
          [{ name: 'crunch', template: 'crunch' }],
          [{ name: 'item', template: 'pause', withSequence: { count: '14' } }],
        ],
      },
      echo('fetch', 'echo "fetched 3 files for {{workflow.parameters.who}}"'),
      echo('crunch', 'echo "crunching the numbers"; echo "result 42"'),
      { name: 'pause', suspend: { duration: '0' } },
    ],
  },
  // A creator the client wrote itself is not kept: the server records who the token is.
  { labels: { team: 'data' }, annotations: { note: 'hello', [CREATOR]: 'mallory' } },
);

/** prepare → build → check, which fails. */
export const chain = workflow('chain', {
  entrypoint: 'main',
  templates: [
    {
      name: 'main',
      dag: {
        tasks: [
          { name: 'prepare', template: 'ok' },
          { name: 'build', template: 'ok', depends: 'prepare' },
          { name: 'check', template: 'boom', depends: 'build' },
        ],
      },
    },
    echo('ok', 'echo ok'),
    echo('boom', 'echo "check failed"; exit 3'),
  ],
});

export const sleeper = (name: string) =>
  workflow(name, {
    entrypoint: 'main',
    templates: [{ name: 'main', steps: [[{ name: 'nap', template: 'nap' }]] }, echo('nap', 'sleep 60')],
  });

/**
 * gen → use, whose inputs are: `msg` (gen's output, in the artifact repository), `web` (http),
 * `note` (raw) and `own` (a store the author named: `ownEndpoint` is the repository's MinIO under
 * another name).
 */
export const inputsWorkflow = (webUrl: string, ownEndpoint: string, creds: Record<string, unknown>): Workflow =>
  workflow('inputs', {
    entrypoint: 'main',
    templates: [
      {
        name: 'main',
        steps: [
          [{ name: 'gen', template: 'gen' }],
          [{ name: 'use', template: 'use', arguments: { artifacts: [{ name: 'msg', from: '{{steps.gen.outputs.artifacts.msg}}' }] } }],
        ],
      },
      echo('gen', 'echo hello > /tmp/msg.txt', {
        outputs: { artifacts: [{ name: 'msg', path: '/tmp/msg.txt', archive: { none: {} } }] },
      }),
      echo('use', 'cat /in/msg /in/web /in/note /in/own', {
        inputs: {
          artifacts: [
            { name: 'msg', path: '/in/msg' },
            { name: 'web', path: '/in/web', http: { url: webUrl } },
            { name: 'note', path: '/in/note', raw: { data: 'written in the workflow' } },
            // The same MinIO under another name: a store the author chose, not the repository.
            {
              name: 'own',
              path: '/in/own',
              vendorAObject: {
                bucket: 'artifacts',
                key: 'own/data.txt',
                endpoint: ownEndpoint,
                insecure: true,
                ...creds,
              },
            },
          ],
        },
      }),
    ],
  });
