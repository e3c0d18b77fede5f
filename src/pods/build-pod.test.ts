import { describe, expect, it } from 'vitest';
import type { Container, Template, Workflow } from '../api/index.js';
import { buildStepPod, type StepPodInput } from './build-pod.js';
import { expandVars } from './expand-vars.js';
import { EMISSARY_PATH, ENV_OUTPUTS, ENV_SCRIPT, SCRIPT_PATH, VAR_DIR, VAR_VOLUME } from './layout.js';

const workflow: Workflow = {
  apiVersion: 'plugflow.io/v1alpha1',
  kind: 'Workflow',
  metadata: { name: 'wf', namespace: 'ns', uid: 'uid-1' },
  spec: { templates: [] },
};

/** Every field of the container field set (spec 002), each with a distinctive value. */
const fullContainer: Container = {
  name: 'ignored',
  image: 'alpine:3',
  imagePullPolicy: 'IfNotPresent',
  command: ['sh', '-c'],
  args: ['echo $(GREETING) $$(LITERAL)'],
  env: [
    { name: 'GREETING', value: 'hello' },
    { name: 'FROM_CM', valueFrom: { configMapKeyRef: { name: 'cm', key: 'k' } } },
  ],
  envFrom: [{ prefix: 'P_', configMapRef: { name: 'cm' } }, { secretRef: { name: 's', optional: true } }],
  lifecycle: { preStop: { exec: { command: ['true'] } } },
  livenessProbe: { exec: { command: ['true'] }, periodSeconds: 7 },
  readinessProbe: { httpGet: { path: '/ready', port: 8080 }, failureThreshold: 5 },
  startupProbe: { tcpSocket: { port: 'http' }, initialDelaySeconds: 2 },
  ports: [{ containerPort: 8080, name: 'http', protocol: 'TCP' }],
  resources: { requests: { cpu: '100m', memory: '64Mi' }, limits: { cpu: '1', memory: '128Mi' } },
  securityContext: { runAsUser: 1000, runAsNonRoot: true, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
  stdin: true,
  stdinOnce: true,
  tty: true,
  terminationMessagePath: '/tmp/term',
  terminationMessagePolicy: 'FallbackToLogsOnError',
  volumeDevices: [{ name: 'blk', devicePath: '/dev/xvda' }],
  volumeMounts: [{ name: 'data', mountPath: '/data', readOnly: true, subPath: 'sub' }],
  workingDir: '/work',
};

function input(template: Partial<Template>, wf: Partial<Workflow['spec']> = {}): StepPodInput {
  return {
    workflow: { ...workflow, spec: { ...workflow.spec, ...wf } },
    workflowPodSpecPatch: wf.podSpecPatch,
    nodeId: 'wf-123',
    podName: 'wf-step-123',
    template: { name: 't', ...template },
    executorImage: 'plugflow:dev',
  };
}

describe('buildStepPod', () => {
  it('carries every field of the container field set into the main container', () => {
    const pod = buildStepPod(input({ container: fullContainer, volumes: [{ name: 'data', emptyDir: {} }] }));
    const main = pod.spec!.containers.find((c) => c.name === 'main')!;
    const { name: _n, command, args, env, volumeMounts, ...rest } = fullContainer;
    expect(main).toMatchObject(rest);
    expect(main.command).toEqual([EMISSARY_PATH, '--', ...command!]);
    expect(main.args).toEqual(args);
    expect(main.env).toEqual(env);
    expect(main.volumeMounts).toEqual([...volumeMounts!, { name: VAR_VOLUME, mountPath: VAR_DIR }]);
    for (const key of Object.keys(fullContainer)) expect(main, key).toHaveProperty(key);
  });

  it('leaves $(VAR) references for the kubelet, which expands them as without plugflow', () => {
    const pod = buildStepPod(input({ container: fullContainer }));
    const main = pod.spec!.containers[0];
    const env = { GREETING: 'hello', LITERAL: 'no' };
    expect([...main.command!, ...main.args!].map((a) => expandVars(a, env))).toEqual([
      EMISSARY_PATH,
      '--',
      'sh',
      '-c',
      'echo hello $(LITERAL)',
    ]);
  });

  it('lays out init, main, wait and wrapped sidecars around the shared volume', () => {
    const pod = buildStepPod({
      ...input({
        container: { image: 'alpine', command: ['true'] },
        initContainers: [{ name: 'prep', image: 'busybox', command: ['mkdir', '/data/x'] }],
        sidecars: [{ name: 'db', image: 'redis', args: ['redis-server', '--port', '7000'] }],
      }),
      imageCommands: new Map([['redis', { entrypoint: ['docker-entrypoint.sh'], cmd: ['redis-server'] }]]),
    });
    const spec = pod.spec!;
    expect(spec.restartPolicy).toBe('Never');
    expect(spec.initContainers!.map((c) => c.name)).toEqual(['init', 'prep']);
    expect(spec.initContainers![0]).toMatchObject({ image: 'plugflow:dev', command: ['plugflow', 'executor', 'install', VAR_DIR] });
    expect(spec.initContainers![1].command).toEqual(['mkdir', '/data/x']);
    expect(spec.containers.map((c) => c.name)).toEqual(['main', 'wait', 'db']);
    expect(spec.containers[1]).toMatchObject({ image: 'plugflow:dev', command: ['plugflow', 'executor', 'wait'] });
    expect(spec.containers[2].command).toEqual([EMISSARY_PATH, '--sidecar', '--', 'docker-entrypoint.sh']);
    expect(spec.containers[2].args).toEqual(['redis-server', '--port', '7000']);
    expect(spec.containers[2].volumeMounts).toEqual([{ name: VAR_VOLUME, mountPath: VAR_DIR, readOnly: true }]);
    expect(spec.volumes).toEqual([{ name: VAR_VOLUME, emptyDir: {} }]);
  });

  it('puts the script in env (escaped against $(VAR) expansion) and its path in argv', () => {
    const source = 'echo $$ $(HOME) "$NAME"\nprintf 42 > /tmp/out';
    const pod = buildStepPod(
      input({
        script: { image: 'python', command: ['bash', '-e'], args: ['extra'], source },
        outputs: {
          parameters: [
            { name: 'answer', valueFrom: { path: '/tmp/out', default: 'none' } },
            { name: 'plain', value: 'x' },
          ],
        },
      }),
    );
    const [main, wait] = pod.spec!.containers;
    expect(main.command).toEqual([EMISSARY_PATH, '--', 'bash', '-e']);
    expect(main.args).toEqual([SCRIPT_PATH, 'extra']);
    const envOf = (name: string, c = main) => expandVars(c.env!.find((e) => e.name === name)!.value!, { HOME: '/root' });
    expect(envOf(ENV_SCRIPT)).toBe(source);
    expect(JSON.parse(envOf(ENV_OUTPUTS))).toEqual([{ name: 'answer', path: '/tmp/out' }]);
    expect(JSON.parse(envOf(ENV_OUTPUTS, wait))).toEqual([{ name: 'answer', path: '/tmp/out', default: 'none' }]);
  });

  it('sets owner reference, labels, annotations and pod-level fields, template over workflow', () => {
    const pod = buildStepPod(
      input(
        {
          container: { image: 'alpine', command: ['true'] },
          metadata: { labels: { team: 'a', app: 't' }, annotations: { note: 'n' } },
          nodeSelector: { disk: 'ssd' },
          tolerations: [{ key: 'gpu', operator: 'Exists', effect: 'NoSchedule' }],
          affinity: {
            nodeAffinity: {
              requiredDuringSchedulingIgnoredDuringExecution: {
                nodeSelectorTerms: [{ matchExpressions: [{ key: 'k', operator: 'In', values: ['v'] }] }],
              },
            },
          },
          securityContext: { runAsUser: 2000, fsGroup: 3000 },
          serviceAccountName: 'tmpl-sa',
          schedulerName: 'custom',
          priorityClassName: 'high',
          activeDeadlineSeconds: '60',
          automountServiceAccountToken: false,
          hostAliases: [{ ip: '10.0.0.2', hostnames: ['b'] }],
          volumes: [{ name: 'cfg', configMap: { name: 'cm' } }],
        },
        {
          podMetadata: { labels: { team: 'wf', extra: 'e' }, annotations: { wfnote: 'w' } },
          nodeSelector: { zone: 'z', disk: 'hdd' },
          tolerations: [{ key: 'ignored', operator: 'Exists' }],
          securityContext: { runAsUser: 1 },
          serviceAccountName: 'wf-sa',
          hostAliases: [{ ip: '10.0.0.1', hostnames: ['a'] }],
          volumes: [{ name: 'shared', emptyDir: {} }],
          volumeClaimTemplates: [{ metadata: { name: 'work' }, spec: { accessModes: ['ReadWriteOnce'] } }],
          imagePullSecrets: [{ name: 'reg' }],
          dnsConfig: { nameservers: ['10.0.0.53'], options: [{ name: 'ndots', value: '2' }] },
        },
      ),
    );
    expect(pod.metadata).toMatchObject({
      name: 'wf-step-123',
      namespace: 'ns',
      labels: {
        team: 'a',
        app: 't',
        extra: 'e',
        'workflows.plugflow.io/workflow': 'wf',
        'workflows.plugflow.io/node-id': 'wf-123',
        'workflows.plugflow.io/component': 'step',
      },
      annotations: { note: 'n', wfnote: 'w' },
      ownerReferences: [
        { apiVersion: 'plugflow.io/v1alpha1', kind: 'Workflow', name: 'wf', uid: 'uid-1', controller: true, blockOwnerDeletion: true },
      ],
    });
    expect(pod.spec).toMatchObject({
      nodeSelector: { zone: 'z', disk: 'ssd' },
      tolerations: [{ key: 'gpu', operator: 'Exists', effect: 'NoSchedule' }],
      securityContext: { runAsUser: 2000, fsGroup: 3000 },
      serviceAccountName: 'tmpl-sa',
      schedulerName: 'custom',
      priorityClassName: 'high',
      activeDeadlineSeconds: 60,
      automountServiceAccountToken: false,
      hostAliases: [
        { ip: '10.0.0.1', hostnames: ['a'] },
        { ip: '10.0.0.2', hostnames: ['b'] },
      ],
      imagePullSecrets: [{ name: 'reg' }],
      dnsConfig: { nameservers: ['10.0.0.53'], options: [{ name: 'ndots', value: '2' }] },
    });
    expect(pod.spec!.affinity!.nodeAffinity).toBeDefined();
    expect(pod.spec!.volumes!.map((v) => v.name)).toEqual([VAR_VOLUME, 'work', 'shared', 'cfg']);
    expect(pod.spec!.volumes![1]).toEqual({ name: 'work', persistentVolumeClaim: { claimName: 'wf-work' } });
    expect(
      buildStepPod({ ...input({ container: { image: 'a', command: ['b'] } }), serviceAccountName: 'forced' }).spec!.serviceAccountName,
    ).toBe('forced');
  });

  it('applies the workflow podSpecPatch, then the template one', () => {
    const pod = buildStepPod(
      input(
        {
          container: { image: 'alpine', command: ['true'] },
          podSpecPatch: 'containers: [{name: main, resources: {limits: {memory: 1Gi}}}]',
        },
        {
          podSpecPatch: '{"containers":[{"name":"main","resources":{"limits":{"memory":"2Gi","cpu":"2"}}}],"priority":null,"hostname":"h"}',
        },
      ),
    );
    expect(pod.spec!.containers[0].resources).toEqual({ limits: { memory: '1Gi', cpu: '2' } });
    expect(pod.spec!.hostname).toBe('h');
  });

  it('mirrors the main volume mounts into sidecars that ask for it', () => {
    const pod = buildStepPod(
      input({
        container: { image: 'a', command: ['b'], volumeMounts: [{ name: 'd', mountPath: '/d' }] },
        volumes: [{ name: 'd', emptyDir: {} }],
        sidecars: [{ name: 's', image: 'x', command: ['y'], mirrorVolumeMounts: true }],
      }),
    );
    const s = pod.spec!.containers[2];
    expect(s.volumeMounts).toEqual([
      { name: 'd', mountPath: '/d' },
      { name: VAR_VOLUME, mountPath: VAR_DIR, readOnly: true },
    ]);
    expect(s).not.toHaveProperty('mirrorVolumeMounts');
  });

  it('is deterministic: the same input gives the same pod', () => {
    const i = input({ script: { image: 'p', command: ['sh'], source: 'echo hi' }, sidecars: [{ name: 's', image: 'x', command: ['y'] }] });
    expect(buildStepPod(i)).toEqual(buildStepPod(structuredClone(i)));
  });

  it('runs the image entrypoint without a command, as Kubernetes does: ENTRYPOINT then args, else CMD', () => {
    const images = new Map([
      ['say', { entrypoint: ['/say'], cmd: ['hello'] }],
      ['shell', { entrypoint: [], cmd: ['/bin/sh'] }],
    ]);
    const argv = (container: Template['container']): string[] => {
      const main = buildStepPod({ ...input({ container }), imageCommands: images }).spec!.containers[0];
      return [...main.command!, ...main.args!];
    };
    expect(argv({ image: 'say' })).toEqual([EMISSARY_PATH, '--', '/say', 'hello']);
    expect(argv({ image: 'say', args: ['bye'] })).toEqual([EMISSARY_PATH, '--', '/say', 'bye']);
    expect(argv({ image: 'shell' })).toEqual([EMISSARY_PATH, '--', '/bin/sh']);
    expect(argv({ image: 'shell', args: ['echo', 'hi'] })).toEqual([EMISSARY_PATH, '--', 'echo', 'hi']);
    // A command replaces both; the image is not consulted.
    expect(argv({ image: 'say', command: ['/other'] })).toEqual([EMISSARY_PATH, '--', '/other']);
    expect(() =>
      buildStepPod({ ...input({ container: { image: 'empty' } }), imageCommands: new Map([['empty', { entrypoint: [], cmd: [] }]]) }),
    ).toThrow(/image "empty" has neither an ENTRYPOINT nor a CMD/);
  });

  it('rejects what it cannot build, naming the template and field', () => {
    const cases: Array<[Partial<Template>, RegExp]> = [
      [{}, /template "t": a step pod needs a container, script, containerSet or data section/],
      [{ container: { command: ['x'] } }, /template "t": container.image is required/],
      [{ container: { image: 'a' } }, /template "t": container: has no command, and the entrypoint of image "a" is not known/],
      [{ script: { image: 'a', source: 'x' } }, /template "t": script.command is required/],
      [
        { container: { image: 'a', command: ['b'] }, sidecars: [{ name: 'wait', image: 'x', command: ['y'] }] },
        /sidecars\[0\].name "wait" is reserved/,
      ],
      [
        { container: { image: 'a', command: ['b'] }, sidecars: [{ name: 's', image: 'x' }] },
        /sidecars\[0\]: has no command, and the entrypoint of image "x"/,
      ],
      [
        {
          container: { image: 'a', command: ['b'] },
          initContainers: [{ name: 's', image: 'x' }],
          sidecars: [{ name: 's', image: 'x', command: ['y'] }],
        },
        /"s" is used twice/,
      ],
      [{ container: { image: 'a', command: ['b'] }, podSpecPatch: '{bad' }, /template "t": podSpecPatch is not valid/],
      [{ container: { image: 'a', command: ['b'] }, activeDeadlineSeconds: 'soon' }, /activeDeadlineSeconds must be a positive integer/],
      [
        { container: { image: 'a', command: ['b'], volumeMounts: [{ name: 'x', mountPath: VAR_DIR }] } },
        /may not use \/var\/run\/plugflow/,
      ],
    ];
    for (const [template, error] of cases) expect(() => buildStepPod(input(template)), String(error)).toThrow(error);
    expect(() =>
      buildStepPod({
        ...input({ container: { image: 'a', command: ['b'] } }),
        workflow: { ...workflow, metadata: { name: 'wf', namespace: 'ns' } },
      }),
    ).toThrow(/metadata.uid/);
  });
});

describe('buildStepPod of a containerSet', () => {
  type SetTemplate = NonNullable<Template['containerSet']>;
  const set = (containers: SetTemplate['containers'], extra: Partial<SetTemplate> = {}) =>
    input({
      containerSet: { containers, volumeMounts: [{ name: 'ws', mountPath: '/ws' }], ...extra },
      volumes: [{ name: 'ws', emptyDir: {} }],
      outputs: { parameters: [{ name: 'm', valueFrom: { path: '/ws/m' } }] },
    });

  it('runs every container behind the emissary with its dependencies, main reporting the outputs', () => {
    const pod = buildStepPod(
      set(
        [
          { name: 'a', image: 'alpine', command: ['sh', '-c', 'echo a'] },
          { name: 'main', image: 'alpine', command: ['cat'], args: ['/ws/m'], dependencies: ['a'] },
        ],
        { retryStrategy: { retries: '2', duration: '1.5s' } },
      ),
    );
    const [a, main, wait] = pod.spec!.containers;
    expect(pod.spec!.containers.map((c) => c.name)).toEqual(['a', 'main', 'wait']);
    expect(a!.command).toEqual(['/var/run/plugflow/emissary', '--', 'sh', '-c', 'echo a']);
    expect(main!.command).toEqual(['/var/run/plugflow/emissary', '--', 'cat']);
    expect(main!.args).toEqual(['/ws/m']);
    const env = (c: typeof a) => Object.fromEntries((c!.env ?? []).map((e) => [e.name, e.value]));
    expect(env(a)).toMatchObject({
      PLUGFLOW_SET_NAME: 'a',
      PLUGFLOW_SET_AFTER: '',
      PLUGFLOW_SET_MEMBERS: 'a,main',
      PLUGFLOW_SET_HAS_MAIN: 'true',
      PLUGFLOW_SET_RETRIES: '2',
      PLUGFLOW_SET_RETRY_WAIT_MS: '1500',
    });
    expect(env(main)).toMatchObject({
      PLUGFLOW_SET_NAME: 'main',
      PLUGFLOW_SET_AFTER: 'a',
      PLUGFLOW_OUTPUTS: '[{"name":"m","path":"/ws/m"}]',
    });
    expect(env(a).PLUGFLOW_OUTPUTS).toBeUndefined();
    for (const c of [a, main]) expect(c!.volumeMounts).toEqual(expect.arrayContaining([{ name: 'ws', mountPath: '/ws' }]));
    expect(wait!.name).toBe('wait');
    expect(pod.metadata!.annotations).toMatchObject({
      'kubectl.kubernetes.io/default-container': 'main',
      'workflows.plugflow.io/container-set': '["a","main"]',
    });
  });

  it('refuses outputs without a container named main, and containers without an image', () => {
    expect(() => buildStepPod(set([{ name: 'a', image: 'alpine', command: ['true'] }]))).toThrow(
      'inputs and outputs of a containerSet go through its container named main, and it has none',
    );
    expect(() => buildStepPod(set([{ name: 'main', command: ['true'] }]))).toThrow('containerSet.containers[0].image is required');
  });
});

describe('buildStepPod of a data template', () => {
  const data = {
    source: { artifactPaths: { name: 'logs', vendorAObject: { key: 'logs/' } } },
    transformation: [{ expression: 'len(data)' }],
  };

  it('runs the plugflow image, with the listing, the transformation and the store credentials from their Secret', () => {
    const pod = buildStepPod({
      ...input({ data }),
      artifacts: {
        inputs: [],
        packs: [],
        outputs: [],
        secrets: [{ env: 'PLUGFLOW_SECRET_0', ref: { name: 'store', key: 'access' } }],
        listing: { bucket: 'b', key: 'logs/', endpoint: 'http://minio:9000', accessKeyEnv: 'PLUGFLOW_SECRET_0' },
      },
    });
    const main = pod.spec!.containers[0]!;
    expect(main.name).toBe('main');
    expect(main.image).toBe('plugflow:dev');
    expect(main.command).toEqual(['/var/run/plugflow/emissary', '--', 'plugflow', 'executor', 'data']);
    const env = Object.fromEntries((main.env ?? []).map((e) => [e.name, e.value ?? e.valueFrom]));
    expect(JSON.parse(env.PLUGFLOW_DATA as string)).toEqual({
      listing: { bucket: 'b', key: 'logs/', endpoint: 'http://minio:9000', accessKeyEnv: 'PLUGFLOW_SECRET_0' },
      transformation: [{ expression: 'len(data)' }],
    });
    expect(env.PLUGFLOW_SECRET_0).toEqual({ secretKeyRef: { name: 'store', key: 'access' } });
    expect(main.securityContext).toMatchObject({ allowPrivilegeEscalation: false });
  });

  it('says so when there is nothing to list', () => {
    expect(() => buildStepPod(input({ data }))).toThrow(
      'data.source.artifactPaths names no store to list, and there is no artifact repository to take one from',
    );
  });
});
