/**
 * The soak's workflow designs: what is submitted and the final state each must reach. A design
 * names its expected phase and, where there is one, an output the final status must carry, so a
 * workflow that "finished" with the wrong result is caught as well as one that never finished.
 *
 * Pods are kept few and tiny (the machine has two cores): every step is a shell one-liner.
 * Plugin templates carry `retryStrategy` (policy OnError, backoff 3 s doubling): an agent pod
 * deleted under a task ends the task in Error, and the retry gets a new agent pod once the old
 * one is gone — the designed outcome still holds. A designed failure (Failed) is not retried.
 */
import type { Template, Workflow, WorkflowPhase } from '../../src/api/index.js';
import { FLAKY } from './plugins/flaky.js';
import { INSTANT } from './plugins/instant.js';
import { REQUEUE } from './plugins/requeue.js';

export type DesignName = 'container' | 'container-fail' | 'script' | 'dag' | 'loop' | 'plugins' | 'plugin-fail' | 'event';

export interface Design {
  name: DesignName;
  expected: WorkflowPhase;
  /** Extra checks of the final workflow; returns what is wrong, if anything. */
  check?: (wf: Workflow) => string | undefined;
}

export const SOAK_LABEL = 'soak.plugflow.io/design';
export const EVENT_LABEL = 'soak.plugflow.io/event';

const sh = (name: string, script: string, extra: Partial<Template> = {}): Template => ({
  name,
  container: { image: 'busybox', command: ['sh', '-c', script] },
  ...extra,
});
const retry = { limit: 3, retryPolicy: 'OnError' as const, backoff: { duration: '3s', factor: 2 } };

function wf(name: string, design: DesignName, spec: Workflow['spec']): Workflow {
  return { apiVersion: 'plugflow.io/v1alpha1', kind: 'Workflow', metadata: { name, labels: { [SOAK_LABEL]: design } }, spec };
}

/** The output parameter `name` of the node shown as `node` (or one of its retry attempts `node(i)`). */
function output(w: Workflow, node: string, name: string): string | undefined {
  for (const n of Object.values(w.status?.nodes ?? {})) {
    if (n.displayName !== node && !new RegExp(`^${node}\\(\\d+\\)$`).test(n.displayName ?? '')) continue;
    const v = n.outputs?.parameters?.find((p) => p.name === name)?.value;
    if (v !== undefined) return String(v);
  }
  return undefined;
}

function rootResult(w: Workflow): string | undefined {
  return w.status?.nodes?.[w.metadata.name!]?.outputs?.result;
}

const expectEq = (what: string, got: unknown, want: unknown) =>
  got === want ? undefined : `${what} is ${JSON.stringify(got)}, expected ${JSON.stringify(want)}`;

export const DESIGNS: Record<DesignName, Design> = {
  container: { name: 'container', expected: 'Succeeded', check: (w) => expectEq('outputs.result', rootResult(w), 'ok') },
  'container-fail': { name: 'container-fail', expected: 'Failed' },
  script: { name: 'script', expected: 'Succeeded', check: (w) => expectEq('outputs.result', rootResult(w), '42') },
  dag: { name: 'dag', expected: 'Succeeded', check: (w) => expectEq('task c output', output(w, 'c', 'v'), 'from-a') },
  loop: {
    name: 'loop',
    expected: 'Succeeded',
    check: (w) =>
      expectEq('loop nodes', Object.values(w.status?.nodes ?? {}).filter((n) => n.type === 'Pod' && n.phase === 'Succeeded').length, 2),
  },
  plugins: {
    name: 'plugins',
    expected: 'Succeeded',
    check: (w) =>
      expectEq('instant echo', output(w, 'a', 'echo'), w.metadata.name) ?? expectEq('requeue polls', output(w, 'b', 'polls'), '3'),
  },
  'plugin-fail': { name: 'plugin-fail', expected: 'Failed' },
  event: { name: 'event', expected: 'Succeeded' },
};

/** A REST-submitted workflow of the given design (not `event`). */
export function buildWorkflow(design: Exclude<DesignName, 'event'>, name: string): Workflow {
  switch (design) {
    case 'container':
      return wf(name, design, { entrypoint: 'main', templates: [sh('main', 'echo ok')] });
    case 'container-fail':
      return wf(name, design, { entrypoint: 'main', templates: [sh('main', 'echo failing on purpose; exit 3')] });
    case 'script':
      return wf(name, design, {
        entrypoint: 'main',
        templates: [{ name: 'main', script: { image: 'busybox', command: ['sh'], source: 'echo $((6*7))' } }],
      });
    case 'dag':
      return wf(name, design, {
        entrypoint: 'main',
        templates: [
          {
            name: 'main',
            dag: {
              tasks: [
                { name: 'a', template: 'produce' },
                {
                  name: 'b',
                  template: 'consume',
                  depends: 'a',
                  arguments: { parameters: [{ name: 'v', value: '{{tasks.a.outputs.parameters.v}}' }] },
                },
                {
                  name: 'c',
                  template: 'consume',
                  depends: 'a',
                  arguments: { parameters: [{ name: 'v', value: '{{tasks.a.outputs.parameters.v}}' }] },
                },
              ],
            },
          },
          sh('produce', 'echo -n from-a > /tmp/v', { outputs: { parameters: [{ name: 'v', valueFrom: { path: '/tmp/v' } }] } }),
          {
            name: 'consume',
            inputs: { parameters: [{ name: 'v' }] },
            outputs: { parameters: [{ name: 'v', value: '{{inputs.parameters.v}}' }] },
            container: { image: 'busybox', command: ['echo', '{{inputs.parameters.v}}'] },
          },
        ],
      });
    case 'loop':
      return wf(name, design, {
        entrypoint: 'main',
        templates: [
          {
            name: 'main',
            steps: [
              [{ name: 'each', template: 'show', arguments: { parameters: [{ name: 'v', value: '{{item}}' }] }, withItems: ['x', 'y'] }],
            ],
          },
          {
            name: 'show',
            inputs: { parameters: [{ name: 'v' }] },
            container: { image: 'busybox', command: ['echo', '{{inputs.parameters.v}}'] },
          },
        ],
      });
    case 'plugins':
      return wf(name, design, {
        entrypoint: 'main',
        templates: [
          {
            name: 'main',
            dag: {
              tasks: [
                { name: 'a', template: 'instant' },
                { name: 'b', template: 'requeue', depends: 'a' },
                { name: 'c', template: 'flaky', depends: 'a' },
              ],
            },
          },
          { name: 'instant', plugin: { [INSTANT]: { echo: name } }, outputs: { parameters: [{ name: 'echo' }] }, retryStrategy: retry },
          {
            name: 'requeue',
            plugin: { [REQUEUE]: { polls: 3, every: '500ms' } },
            outputs: { parameters: [{ name: 'polls' }] },
            retryStrategy: retry,
          },
          // Its 503 and dropped connection use 2 of the agent's 5 attempts by design; a sidecar-kill
          // in the middle resets its call count and adds refused connections, which can use up the
          // rest: the task then Fails, as the contract says (the peer too). The node is retried on
          // Failed as well, so the lane still has to end Succeeded.
          { name: 'flaky', plugin: { [FLAKY]: {} }, retryStrategy: { ...retry, retryPolicy: 'Always' as const } },
        ],
      });
    case 'plugin-fail':
      return wf(name, design, {
        entrypoint: 'main',
        templates: [{ name: 'main', plugin: { [INSTANT]: { fail: true } }, retryStrategy: retry }],
      });
  }
}

/** The WorkflowTemplate events submit, and the binding that submits it. */
export function eventObjects(namespace: string): { template: object; binding: object } {
  return {
    template: {
      apiVersion: 'plugflow.io/v1alpha1',
      kind: 'WorkflowTemplate',
      metadata: { name: 'soak-event', namespace },
      spec: {
        entrypoint: 'main',
        arguments: { parameters: [{ name: 'id' }] },
        templates: [
          {
            name: 'main',
            inputs: { parameters: [{ name: 'id', value: '{{workflow.parameters.id}}' }] },
            container: { image: 'busybox', command: ['echo', 'event {{inputs.parameters.id}}'] },
          },
        ],
      },
    },
    binding: {
      apiVersion: 'plugflow.io/v1alpha1',
      kind: 'WorkflowEventBinding',
      metadata: { name: 'soak-event', namespace },
      spec: {
        event: { selector: 'payload.soak == true && discriminator == "soak"' },
        submit: {
          workflowTemplateRef: { name: 'soak-event' },
          metadata: { labels: { [EVENT_LABEL]: 'payload.id', [SOAK_LABEL]: '"event"' } },
          arguments: { parameters: [{ name: 'id', valueFrom: { event: 'payload.id' } }] },
        },
      },
    },
  };
}
