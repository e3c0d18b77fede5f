/**
 * Realistic documents that exercise every part of the CRD schemas: the unit tests check them
 * against the schemas offline, and test/crds.test.ts round-trips them through a real API
 * server. Kept beside the schemas so a schema change and its sample change together.
 */
import { API_VERSION } from '../constants.js';
import type { WorkflowEventBinding } from '../event-binding.js';
import type { WorkflowTaskSet } from '../taskset.js';
import type { Workflow } from '../workflow.js';

/** A Workflow with one template of each of the ten kinds, and the fields around them. */
export function workflowWithEveryTemplateKind(name = 'every-kind'): Workflow {
  return {
    apiVersion: API_VERSION,
    kind: 'Workflow',
    metadata: { name, labels: { app: 'sample' } },
    spec: {
      entrypoint: 'main',
      serviceAccountName: 'runner',
      parallelism: 3,
      arguments: {
        parameters: [
          { name: 'message', value: 'hello' },
          { name: 'count', value: 3 },
          { name: 'ratio', value: 1.5 },
          { name: 'enabled', value: true },
          { name: 'choice', value: 'b', enum: ['a', 'b', 7], description: 'one of a, b, 7' },
        ],
      },
      volumes: [{ name: 'work', emptyDir: { sizeLimit: '1Gi' } }],
      podGC: { strategy: 'OnPodCompletion' },
      ttlStrategy: { secondsAfterCompletion: 3600 },
      hooks: { exit: { template: 'notify' } },
      templates: [
        {
          name: 'main',
          dag: {
            failFast: false,
            tasks: [
              {
                name: 'build',
                template: 'build',
                arguments: { parameters: [{ name: 'n', value: '{{item}}' }] },
                withItems: [1, 'two', { three: 3 }, [4], true, 2.5],
              },
              { name: 'script', template: 'script', depends: 'build.Succeeded', withSequence: { count: '3', format: '%02d' } },
              { name: 'steps', template: 'steps', dependencies: ['build'], continueOn: { failed: true } },
              { name: 'wait', template: 'wait', when: '{{workflow.parameters.enabled}} == true' },
              { name: 'apply', template: 'apply', depends: 'wait' },
              { name: 'call', template: 'call', depends: 'apply', hooks: { exit: { template: 'notify' } } },
              { name: 'plug', template: 'plug', depends: 'call' },
              { name: 'set', template: 'set', depends: 'plug' },
              { name: 'data', template: 'data', depends: 'plug' },
              { name: 'shared', templateRef: { name: 'library', template: 'echo', clusterScope: true }, depends: 'data' },
              { name: 'inline', inline: { name: 'inline', container: { image: 'busybox', command: ['true'] } }, depends: 'data' },
            ],
          },
        },
        {
          name: 'build',
          inputs: { parameters: [{ name: 'n', default: 0 }], artifacts: [{ name: 'src', path: '/src', raw: { data: 'hello' } }] },
          outputs: {
            parameters: [{ name: 'digest', valueFrom: { path: '/tmp/digest', default: 'none' }, globalName: 'digest' }],
            artifacts: [{ name: 'bin', path: '/out/bin', archive: { none: {} } }],
          },
          metadata: { labels: { role: 'build' }, annotations: { note: 'x' } },
          retryStrategy: {
            limit: '3',
            retryPolicy: 'OnTransientError',
            backoff: { duration: '10', factor: 2, maxDuration: '5m' },
            affinity: { nodeAntiAffinity: {} },
            expression: 'lastRetry.status == "Error"',
          },
          activeDeadlineSeconds: 600,
          timeout: '10m',
          nodeSelector: { 'kubernetes.io/os': 'linux' },
          tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'ci', effect: 'NoSchedule' }],
          container: {
            name: 'main',
            image: 'golang:1.22',
            command: ['sh', '-c'],
            args: ['go build -o /out/bin ./... && sha256sum /out/bin > /tmp/digest'],
            env: [
              { name: 'N', value: '{{inputs.parameters.n}}' },
              { name: 'TOKEN', valueFrom: { secretKeyRef: { name: 'ci', key: 'token' } } },
            ],
            resources: { requests: { cpu: '500m', memory: '256Mi' }, limits: { cpu: 1, memory: '1Gi' } },
            volumeMounts: [{ name: 'work', mountPath: '/work' }],
            securityContext: { runAsNonRoot: true, runAsUser: 1000 },
          },
          sidecars: [{ name: 'cache', image: 'redis', mirrorVolumeMounts: true }],
          volumes: [{ name: 'scratch', emptyDir: {} }],
        },
        {
          name: 'script',
          script: { image: 'python:3.12', command: ['python'], source: 'print("hi")\n' },
          memoize: { key: '{{inputs.parameters.n}}', maxAge: '24h', cache: { configMap: { name: 'memo', key: 'k' } } },
          synchronization: { mutex: { name: 'one-at-a-time' } },
        },
        {
          name: 'steps',
          parallelism: 2,
          failFast: true,
          steps: [
            [{ name: 'first', template: 'build', arguments: { parameters: [{ name: 'n', value: 1 }] } }],
            [
              { name: 'fan', template: 'build', withParam: '["a","b"]' },
              { name: 'skip', template: 'wait', when: 'false', onExit: 'notify' },
            ],
          ],
        },
        { name: 'wait', suspend: { duration: '20' } },
        {
          name: 'apply',
          resource: {
            action: 'create',
            setOwnerReference: true,
            mergeStrategy: 'merge',
            successCondition: 'status.succeeded > 0',
            failureCondition: 'status.failed > 3',
            flags: ['--validate=false'],
            manifest: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  generateName: made-\n',
          },
        },
        {
          name: 'call',
          http: {
            url: 'https://example.com/api/{{workflow.name}}',
            method: 'POST',
            headers: [
              { name: 'Content-Type', value: 'application/json' },
              { name: 'Authorization', valueFrom: { secretKeyRef: { name: 'api', key: 'token' } } },
            ],
            body: '{"ok": true}',
            timeoutSeconds: 20,
            insecureSkipVerify: false,
            successCondition: 'response.statusCode == 201',
          },
        },
        { name: 'plug', plugin: { hello: { text: 'hi', times: 2, nested: { list: [1, 2] } } } },
        {
          name: 'set',
          containerSet: {
            volumeMounts: [{ name: 'work', mountPath: '/work' }],
            retryStrategy: { retries: 2, duration: '5s' },
            containers: [
              { name: 'a', image: 'busybox', command: ['sh', '-c', 'echo a'] },
              { name: 'b', image: 'busybox', command: ['sh', '-c', 'echo b'], dependencies: ['a'] },
            ],
          },
        },
        {
          name: 'data',
          data: {
            source: { artifactPaths: { name: 'files', vendorDObject: { bucket: 'b', key: 'k' } } },
            transformation: [{ expression: 'filter(data, {# endsWith ".csv"})' }],
          },
        },
        {
          name: 'notify',
          executor: { serviceAccountName: 'notifier' },
          automountServiceAccountToken: false,
          metrics: { vendorP: [{ name: 'notified', help: 'count of notifications', counter: { value: '1' } }] },
          container: { image: 'curlimages/curl', args: ['-s', 'https://example.com/notify'] },
        },
      ],
    },
  };
}

/** A binding with a cluster template reference, event arguments and metadata expressions. */
export function sampleEventBinding(name = 'on-push'): WorkflowEventBinding {
  return {
    apiVersion: API_VERSION,
    kind: 'WorkflowEventBinding',
    metadata: { name },
    spec: {
      event: { selector: 'payload.repo != nil && metadata["x-github-event"] == ["push"]' },
      submit: {
        workflowTemplateRef: { name: 'build', clusterScope: true },
        arguments: { parameters: [{ name: 'repo', valueFrom: { event: 'payload.repo' } }] },
        metadata: { name: '"build-" + payload.sha', labels: { repo: 'payload.repo' }, annotations: { by: '"events"' } },
      },
    },
  };
}

/** A TaskSet as the controller writes it (spec) and the agent fills it (status). */
export function sampleTaskSet(name = 'every-kind'): WorkflowTaskSet {
  return {
    apiVersion: API_VERSION,
    kind: 'WorkflowTaskSet',
    metadata: { name },
    spec: {
      tasks: {
        'every-kind-1234': { name: 'plug', plugin: { hello: { text: 'hi' } } },
        'every-kind-5678': { name: 'call', http: { url: 'https://example.com' } },
      },
    },
    status: {
      nodes: {
        'every-kind-1234': { phase: 'Running', message: 'working', progress: '1/2' },
        'every-kind-5678': { phase: 'Succeeded', outputs: { result: 'ok', parameters: [{ name: 'p', value: 'v' }] } },
      },
    },
  };
}
