/**
 * Hand-written hostile objects for the cluster fuzz, each schema-valid enough that the API
 * server stores it, so the controller and the server have to deal with it: recursion, cycles,
 * dangling references, bad expressions, bad durations, impossible limits. Random mutations of
 * valid objects (generators.ts) cover the rest.
 */
import type { Template, Workflow } from '../../src/api/index.js';

const c = (name: string, extra: Partial<Template> = {}): Template => ({
  name,
  container: { image: 'busybox', command: ['echo', 'x'] },
  ...extra,
});

export function hostileWorkflowSpecs(): { label: string; spec: Workflow['spec'] }[] {
  return [
    {
      label: 'self-recursive steps',
      spec: { entrypoint: 'loop', templates: [{ name: 'loop', steps: [[{ name: 'again', template: 'loop' }]] }] },
    },
    {
      label: 'mutually recursive DAGs',
      spec: {
        entrypoint: 'a',
        templates: [
          { name: 'a', dag: { tasks: [{ name: 't', template: 'b' }] } },
          { name: 'b', dag: { tasks: [{ name: 't', template: 'a' }] } },
        ],
      },
    },
    {
      label: 'DAG cycle',
      spec: {
        entrypoint: 'd',
        templates: [
          {
            name: 'd',
            dag: {
              tasks: [
                { name: 'a', template: 'c', depends: 'b' },
                { name: 'b', template: 'c', depends: 'a' },
              ],
            },
          },
          c('c'),
        ],
      },
    },
    { label: 'entrypoint missing', spec: { entrypoint: 'nope', templates: [c('main')] } },
    { label: 'no templates', spec: { entrypoint: 'main', templates: [] } },
    {
      label: 'depends garbage',
      spec: { entrypoint: 'd', templates: [{ name: 'd', dag: { tasks: [{ name: 'a', template: 'c', depends: 'b &&& (c' }] } }, c('c')] },
    },
    {
      label: 'depends on an unknown task',
      spec: {
        entrypoint: 'd',
        templates: [{ name: 'd', dag: { tasks: [{ name: 'a', template: 'c', depends: 'ghost.Succeeded' }] } }, c('c')],
      },
    },
    {
      label: 'when garbage',
      spec: { entrypoint: 's', templates: [{ name: 's', steps: [[{ name: 'a', template: 'c', when: '{{=1/0}} ==== (' }]] }, c('c')] },
    },
    {
      label: 'withParam not JSON',
      spec: { entrypoint: 's', templates: [{ name: 's', steps: [[{ name: 'a', template: 'c', withParam: 'not json at all' }]] }, c('c')] },
    },
    {
      label: 'withParam a long list',
      spec: {
        entrypoint: 's',
        templates: [
          { name: 's', steps: [[{ name: 'a', template: 'c', withParam: JSON.stringify(Array.from({ length: 500 }, (_, i) => i)) }]] },
          c('c'),
        ],
      },
    },
    {
      label: 'withItems of 300',
      spec: {
        entrypoint: 's',
        templates: [{ name: 's', steps: [[{ name: 'a', template: 'c', withItems: Array.from({ length: 300 }, (_, i) => i) }]] }, c('c')],
      },
    },
    {
      label: 'unterminated {{=',
      spec: {
        entrypoint: 'main',
        templates: [{ name: 'main', container: { image: 'busybox', command: ['echo', '{{=sprig.repeat(10, "x"'] } }],
      },
    },
    {
      label: 'expression bomb',
      spec: {
        entrypoint: 'main',
        templates: [{ name: 'main', container: { image: 'busybox', command: ['echo', '{{=sprig.repeat(100000000, "x")}}'] } }],
      },
    },
    {
      label: 'unknown variable',
      spec: {
        entrypoint: 'main',
        templates: [
          {
            name: 'main',
            container: { image: 'busybox', command: ['echo', '{{inputs.parameters.ghost}} {{workflow.outputs.parameters.x}}'] },
          },
        ],
      },
    },
    {
      label: 'retry expression garbage',
      spec: { entrypoint: 'main', templates: [c('main', { retryStrategy: { limit: 2, expression: 'lastRetry.status ==== ' } })] },
    },
    {
      label: 'retry backoff garbage',
      spec: {
        entrypoint: 'main',
        templates: [c('main', { retryStrategy: { limit: 2, backoff: { duration: 'banana', factor: -3, maxDuration: '-1s' } } })],
      },
    },
    { label: 'negative deadline', spec: { entrypoint: 'main', activeDeadlineSeconds: -5, templates: [c('main')] } },
    { label: 'parallelism 0', spec: { entrypoint: 'main', parallelism: 0, templates: [c('main')] } },
    { label: 'exit handler missing', spec: { entrypoint: 'main', onExit: 'ghost', templates: [c('main')] } },
    {
      label: 'templateRef to a missing WorkflowTemplate',
      spec: { entrypoint: 's', templates: [{ name: 's', steps: [[{ name: 'a', templateRef: { name: 'ghost', template: 'x' } }]] }] },
    },
    {
      label: 'templateRef to a bad WorkflowTemplate',
      spec: { entrypoint: 's', templates: [{ name: 's', steps: [[{ name: 'a', templateRef: { name: 'fz-t-0', template: 'main' } }]] }] },
    },
    { label: 'workflowTemplateRef to a missing template', spec: { workflowTemplateRef: { name: 'ghost' } } },
    { label: 'workflowTemplateRef to a fuzzed template', spec: { workflowTemplateRef: { name: 'fz-t-1' } } },
    { label: 'plugin nobody serves', spec: { entrypoint: 'main', templates: [{ name: 'main', plugin: { 'no-such-plugin': {} } }] } },
    { label: 'plugin section with two keys', spec: { entrypoint: 'main', templates: [{ name: 'main', plugin: { a: {}, b: {} } }] } },
    {
      label: 'http with a bad URL',
      spec: { entrypoint: 'main', templates: [{ name: 'main', http: { url: 'ht!tp://\u0000/', method: 'BREW' } }] },
    },
    {
      label: 'suspend duration garbage',
      spec: { entrypoint: 'main', templates: [{ name: 'main', suspend: { duration: '5 fortnights' } }] },
    },
    { label: 'timeout garbage', spec: { entrypoint: 'main', templates: [c('main', { timeout: '-1h' })] } },
    {
      label: '400 chained templates',
      spec: {
        entrypoint: 't0',
        templates: Array.from({ length: 400 }, (_, i) =>
          i < 399 ? { name: `t${i}`, steps: [[{ name: 's', template: `t${i + 1}` }]] } : c(`t${i}`),
        ),
      },
    },
    {
      label: 'parameter 500 KB',
      spec: { entrypoint: 'main', arguments: { parameters: [{ name: 'p', value: 'x'.repeat(500_000) }] }, templates: [c('main')] },
    },
  ];
}

/** Event binding specs whose expressions are hostile. */
export function hostileBindingSpecs(): { label: string; spec: unknown }[] {
  const submit = { workflowTemplateRef: { name: 'fz-canary' } };
  return [
    { label: 'selector syntax error', spec: { event: { selector: 'payload.x ==== (' }, submit } },
    { label: 'selector not boolean', spec: { event: { selector: 'payload' }, submit } },
    { label: 'selector reads nil', spec: { event: { selector: 'payload.a.b.c.d == 1' }, submit } },
    { label: 'regex bomb', spec: { event: { selector: 'string(payload) matches "(a+)+$"' }, submit } },
    { label: 'deeply nested selector', spec: { event: { selector: `${'('.repeat(2000)}true${')'.repeat(2000)}` }, submit } },
    { label: 'huge selector', spec: { event: { selector: Array.from({ length: 5000 }, () => 'true').join(' && ') }, submit } },
    {
      label: 'sprig bomb in a parameter',
      spec: {
        event: { selector: 'true' },
        submit: { ...submit, arguments: { parameters: [{ name: 'p', valueFrom: { event: 'sprig.repeat(100000000, "x")' } }] } },
      },
    },
    { label: 'metadata name not a string', spec: { event: { selector: 'true' }, submit: { ...submit, metadata: { name: '42' } } } },
    { label: 'metadata name invalid', spec: { event: { selector: 'true' }, submit: { ...submit, metadata: { name: '"UPPER_case!"' } } } },
    {
      label: 'label value garbage',
      spec: { event: { selector: 'true' }, submit: { ...submit, metadata: { labels: { 'a/b/c': 'payload' } } } },
    },
    { label: 'missing template', spec: { event: { selector: 'true' }, submit: { workflowTemplateRef: { name: 'ghost' } } } },
    {
      label: 'cluster template missing',
      spec: { event: { selector: 'true' }, submit: { workflowTemplateRef: { name: 'ghost', clusterScope: true } } },
    },
    {
      label: 'fixed name (clashes on the second event)',
      spec: { event: { selector: 'true' }, submit: { ...submit, metadata: { name: '"fz-fixed"' } } },
    },
  ];
}

/** `sidecar.container` texts of plugin ConfigMaps that must be ignored with a reason. */
export function hostileSidecars(): { label: string; data: Record<string, string> }[] {
  const alias = [
    'a: &a [x,x,x,x,x,x,x,x,x]',
    ...Array.from(
      { length: 9 },
      (_, i) =>
        `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)}]`,
    ),
  ].join('\n');
  return [
    { label: 'no data', data: {} },
    { label: 'not YAML', data: { 'sidecar.container': '{{{ : : ]' } },
    { label: 'YAML alias bomb', data: { 'sidecar.container': alias } },
    { label: 'a list, not a container', data: { 'sidecar.container': '- a\n- b' } },
    {
      label: 'no ports',
      data: {
        'sidecar.container':
          'name: x\nimage: x\nresources: {requests: {cpu: 1m, memory: 1Mi}, limits: {cpu: 1m, memory: 1Mi}}\nsecurityContext: {runAsNonRoot: true, runAsUser: 1000}',
      },
    },
    {
      label: 'no resources',
      data: {
        'sidecar.container': 'name: x\nimage: x\nports: [{containerPort: 7000}]\nsecurityContext: {runAsNonRoot: true, runAsUser: 1000}',
      },
    },
    {
      label: 'port of the wrong type',
      data: {
        'sidecar.container':
          'name: x\nimage: x\nports: [{containerPort: "seven"}]\nresources: {requests: {cpu: 1m, memory: 1Mi}, limits: {cpu: 1m, memory: 1Mi}}\nsecurityContext: {runAsNonRoot: true, runAsUser: 1000}',
      },
    },
    { label: 'automount not a boolean', data: { 'sidecar.container': 'name: x', 'sidecar.automountServiceAccountToken': 'sometimes' } },
    {
      label: 'huge container',
      data: { 'sidecar.container': `name: x\nimage: x\nargs: [${Array.from({ length: 20_000 }, () => '"aaaaaaaaaa"').join(',')}]` },
    },
    {
      label: 'name with capitals and a slash',
      data: {
        'sidecar.container':
          'name: "Bad/Name"\nimage: x\nports: [{containerPort: 7001}]\nresources: {requests: {cpu: 1m, memory: 1Mi}, limits: {cpu: 1m, memory: 1Mi}}\nsecurityContext: {runAsNonRoot: true, runAsUser: 1000}',
      },
    },
    {
      label: 'unknown fields',
      data: {
        'sidecar.container':
          'name: x\nimage: x\nbogus: 1\nports: [{containerPort: 7002, bogus: 2}]\nresources: {requests: {cpu: 1m, memory: 1Mi}, limits: {cpu: 1m, memory: 1Mi}}\nsecurityContext: {runAsNonRoot: true, runAsUser: 1000}',
      },
    },
  ];
}
