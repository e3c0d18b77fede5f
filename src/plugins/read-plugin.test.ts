import { describe, expect, it } from 'vitest';
import { stringify as yamlStringify } from 'yaml';
import { PluginBuildError } from './errors.js';
import { readPluginYaml } from './read-plugin.js';

/** YAML as Kubernetes reads it (1.1: a bare `y` would be a boolean), as plugin.yaml is read. */
const stringify = (value: unknown): string => yamlStringify(value, { version: '1.1' });

/** A valid plugin.yaml as an object; tests change one thing at a time. */
function plugin(): any {
  return {
    apiVersion: 'plugflow.io/v1alpha1',
    kind: 'ExecutorPlugin',
    metadata: { name: 'hello', annotations: { 'workflows.plugflow.io/description': 'says hello' } },
    spec: {
      sidecar: {
        container: {
          name: 'hello',
          image: 'python:3.11-alpine',
          command: ['python3', '-c'],
          ports: [{ containerPort: 4355 }],
          resources: { requests: { cpu: '100m', memory: '32Mi' }, limits: { cpu: '200m', memory: '64Mi' } },
          securityContext: { runAsNonRoot: true, runAsUser: 65534 },
        },
      },
    },
  };
}

function problemsOf(value: unknown): string[] {
  try {
    readPluginYaml(typeof value === 'string' ? value : stringify(value));
  } catch (err) {
    expect(err).toBeInstanceOf(PluginBuildError);
    return [...(err as PluginBuildError).problems];
  }
  throw new Error('expected the plugin to be refused');
}

function withContainer(change: (c: any) => void): any {
  const p = plugin();
  change(p.spec.sidecar.container);
  return p;
}

describe('readPluginYaml', () => {
  it('accepts a valid plugin and returns no warnings', () => {
    const { plugin: p, warnings } = readPluginYaml(stringify(plugin()));
    expect(p.metadata.name).toBe('hello');
    expect(p.spec.sidecar.container.ports![0]!.containerPort).toBe(4355);
    expect(warnings).toEqual([]);
  });

  it('refuses YAML syntax errors and duplicate keys with the line', () => {
    expect(problemsOf('kind: [unclosed\n')[0]).toMatch(/^line \d+, column \d+: /);
    expect(problemsOf('kind: ExecutorPlugin\nkind: ExecutorPlugin\n')[0]).toMatch(/^line 2, column 1: duplicated mapping key/);
  });

  it('names unknown fields at every level', () => {
    const top = plugin();
    top.extra = 1;
    expect(problemsOf(top)).toEqual(['extra: unknown field']);
    const meta = plugin();
    meta.metadata.generatedName = 'x';
    expect(problemsOf(meta)).toEqual(['metadata.generatedName: unknown field']);
    expect(problemsOf(withContainer((c) => (c.ports[0].containerPortt = 1)))).toEqual([
      'spec.sidecar.container.ports[0].containerPortt: unknown field',
    ]);
    expect(problemsOf(withContainer((c) => (c.securityContext.runAsUsr = 1)))).toContain(
      'spec.sidecar.container.securityContext.runAsUsr: unknown field',
    );
    const sidecar = plugin();
    sidecar.spec.sidecar.automount = true;
    expect(problemsOf(sidecar)).toEqual(['spec.sidecar.automount: unknown field']);
  });

  it('names fields of the wrong type', () => {
    expect(problemsOf(withContainer((c) => (c.ports[0].containerPort = '4355')))).toEqual([
      'spec.sidecar.container.ports[0].containerPort: must be an integer, got a string',
    ]);
    expect(problemsOf(withContainer((c) => (c.ports[0].containerPort = 70000)))[0]).toMatch(/containerPort: 70000 is out of range/);
    expect(problemsOf(withContainer((c) => (c.command = 'python3')))).toEqual([
      'spec.sidecar.container.command: must be a list, got a string',
    ]);
    expect(problemsOf(withContainer((c) => (c.resources.limits.cpu = 'lots')))[0]).toMatch(
      /resources.limits.cpu: "lots" is not a quantity/,
    );
  });

  it('checks apiVersion, kind and the plugin name', () => {
    const p = plugin();
    p.apiVersion = 'argoproj.io/v1alpha1';
    p.kind = 'Plugin';
    p.metadata.name = 'Hello_World';
    const problems = problemsOf(p);
    expect(problems).toContain('apiVersion: must be plugflow.io/v1alpha1, got "argoproj.io/v1alpha1"');
    expect(
      problems.some((m) => m.startsWith('kind: must be ExecutorPlugin, got "Plugin"; plugflow plugin build reads an ExecutorPlugin')),
    ).toBe(true);
    expect(problems.some((m) => m.startsWith('metadata.name: "Hello_World" must be a DNS label'))).toBe(true);
    const missing = plugin();
    delete missing.metadata.name;
    expect(problemsOf(missing)).toEqual(['metadata.name: required field is missing']);
  });

  it('requires at least one port', () => {
    expect(problemsOf(withContainer((c) => delete c.ports))).toEqual([
      'sidecar is invalid: spec.sidecar.container.ports must list at least one port (the agent calls the plugin on its first containerPort)',
    ]);
    expect(problemsOf(withContainer((c) => (c.ports = [])))[0]).toMatch(/^sidecar is invalid: spec.sidecar.container.ports must list/);
  });

  it('refuses a port listed twice and warns on common ports', () => {
    expect(problemsOf(withContainer((c) => c.ports.push({ containerPort: 4355 })))).toEqual([
      'sidecar is invalid: spec.sidecar.container.ports[1].containerPort 4355 is already listed at ports[0]',
    ]);
    for (const port of [80, 443, 8080, 8081, 8443]) {
      const { warnings } = readPluginYaml(stringify(withContainer((c) => (c.ports = [{ containerPort: port }]))));
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toContain(`spec.sidecar.container.ports[0].containerPort ${port} is a common port`);
    }
    expect(readPluginYaml(stringify(withContainer((c) => (c.ports = [{ containerPort: 8082 }])))).warnings).toEqual([]);
  });

  it('requires the cpu and memory keys of requests and limits, not just the maps', () => {
    for (const kind of ['requests', 'limits']) {
      for (const res of ['cpu', 'memory']) {
        const problems = problemsOf(withContainer((c) => delete c.resources[kind][res]));
        expect(problems).toEqual([
          `sidecar is invalid: spec.sidecar.container.resources.${kind}.${res} is required (resources.requests and resources.limits must both give cpu and memory)`,
        ]);
      }
    }
    const empty = problemsOf(withContainer((c) => (c.resources = { requests: {}, limits: {} })));
    expect(empty).toHaveLength(4);
    expect(problemsOf(withContainer((c) => delete c.resources))).toHaveLength(4);
  });

  it('refuses requests above limits', () => {
    expect(problemsOf(withContainer((c) => (c.resources.requests.memory = '1Gi')))).toEqual([
      'sidecar is invalid: spec.sidecar.container.resources.requests.memory (1Gi) must not exceed resources.limits.memory (64Mi)',
    ]);
  });

  it('requires runAsNonRoot and runAsUser, and never lets a plugin run as root, privileged or with added capabilities', () => {
    expect(problemsOf(withContainer((c) => delete c.securityContext.runAsNonRoot))).toEqual([
      'sidecar is invalid: spec.sidecar.container.securityContext.runAsNonRoot is required and must be true (plugins never run as root)',
    ]);
    expect(problemsOf(withContainer((c) => delete c.securityContext.runAsUser))).toEqual([
      'sidecar is invalid: spec.sidecar.container.securityContext.runAsUser is required (a numeric user id, for example 1000)',
    ]);
    expect(problemsOf(withContainer((c) => delete c.securityContext))).toHaveLength(2);
    expect(problemsOf(withContainer((c) => (c.securityContext.runAsUser = 0)))[0]).toMatch(
      /runAsUser is 0 \(root\); plugins never run as root/,
    );
    // Root on purpose is refused too (stricter than spec 000: README "Pod security").
    expect(problemsOf(withContainer((c) => (c.securityContext = { runAsNonRoot: false, runAsUser: 0 })))).toEqual([
      'sidecar is invalid: spec.sidecar.container.securityContext.runAsNonRoot is false; it must be true (plugins never run as root)',
      'sidecar is invalid: spec.sidecar.container.securityContext.runAsUser is 0 (root); plugins never run as root, choose a non-zero user id',
    ]);
    const hostile = problemsOf(
      withContainer((c) =>
        Object.assign(c.securityContext, { privileged: true, allowPrivilegeEscalation: true, capabilities: { add: ['SYS_ADMIN'] } }),
      ),
    );
    expect(hostile.map((p) => p.split(' ')[3])).toEqual([
      'spec.sidecar.container.securityContext.privileged',
      'spec.sidecar.container.securityContext.capabilities.add',
      'spec.sidecar.container.securityContext.allowPrivilegeEscalation',
    ]);
  });

  it('requires a container name and image, and keeps the agent container names free', () => {
    expect(problemsOf(withContainer((c) => delete c.name))).toEqual(['spec.sidecar.container.name: required field is missing']);
    expect(problemsOf(withContainer((c) => delete c.image))).toEqual(['sidecar is invalid: spec.sidecar.container.image is required']);
    expect(problemsOf(withContainer((c) => (c.name = 'main')))[0]).toMatch(/container.name "main" is reserved/);
    expect(problemsOf(withContainer((c) => (c.name = 'Hello')))[0]).toMatch(/container.name "Hello" must be a DNS label/);
  });

  it('refuses env values that are literal secrets, without printing them', () => {
    const cases: Array<[string, string]> = [
      ['API_KEY', '9f8e7d6c5b4a39281706f5e4d3c2b1a0'],
      ['CLIENT_SECRET', 'Xk29vLq8TzP0wR4mN7sB1cD6'],
      ['API_TOKEN', '123e4567-e89b-12d3-a456-426614174000'],
      ['SOME_SETTING', '-----BEGIN RSA PRIVATE KEY-----\nMIIB\n-----END RSA PRIVATE KEY-----'],
      ['CONFIG', 'ghp_abcdefghijklmnopqrstuvwxyz0123456789'],
      ['AWS_ID', 'AKIAIOSFODNN7EXAMPLE'],
      ['DATABASE_URL', 'postgres://app:s3cr3t@db:5432/app'],
    ];
    for (const [name, value] of cases) {
      const problems = problemsOf(
        withContainer(
          (c) =>
            (c.env = [
              { name: 'OK', value: 'fine' },
              { name, value },
            ]),
        ),
      );
      expect(problems, name).toHaveLength(1);
      expect(problems[0]).toMatch(new RegExp(`^sidecar is invalid: spec.sidecar.container.env\\[1\\].value \\(${name}\\): `));
      expect(problems[0]).toContain('env[1].valueFrom.secretKeyRef');
      expect(problems[0]).not.toContain(value);
    }
  });

  it('only warns when a secret-sounding variable holds what may be a Secret name or key, or a short value', () => {
    const cases: Array<[string, string]> = [
      ['GITHUB_TOKEN_SECRET', 'github-token'],
      ['SECRET_KEY', 'token'],
      ['API_KEY', 'abc123'],
      ['DB_PASSWORD', 'hunter2'],
      ['GITHUB_TOKEN', 'GithubTokenSecretName'],
      ['AWS_SECRET_ACCESS_KEY', 'prod-aws-credentials-2024'],
    ];
    for (const [name, value] of cases) {
      const { warnings } = readPluginYaml(
        stringify(
          withContainer(
            (c) =>
              (c.env = [
                { name: 'OK', value: 'fine' },
                { name, value },
              ]),
          ),
        ),
      );
      expect(warnings, name).toHaveLength(1);
      expect(warnings[0]).toMatch(
        new RegExp(
          `^spec.sidecar.container.env\\[1\\].value \\(${name}\\): its name ends in [A-Z_]+ and it has a literal value; if it is the secret itself`,
        ),
      );
      expect(warnings[0]).not.toContain(value);
    }
  });

  it('raises no false alarm on names that point at secrets or harmless values', () => {
    const env = [
      { name: 'TOKEN_PATH', value: '/var/run/workflow/token' },
      { name: 'SECRET_NAME', value: 'my-secret' },
      { name: 'PASSWORD_FILE', value: '/etc/app/password' },
      { name: 'MAX_TOKENS', value: '4096' },
      { name: 'USE_TOKEN', value: 'true' },
      { name: 'AUTH_TOKEN', value: '' },
      { name: 'API_KEY', value: '$(OTHER_VAR)' },
      { name: 'TOKENIZER', value: 'bpe' },
      { name: 'LOG_LEVEL', value: 'debug' },
      { name: 'DATABASE_URL', value: 'postgres://app:$(DB_PASSWORD)@db:5432/app' },
      { name: 'API_TOKEN', valueFrom: { secretKeyRef: { name: 'creds', key: 'token' } } },
    ];
    expect(() => readPluginYaml(stringify(withContainer((c) => (c.env = env))))).not.toThrow();
  });

  it('reads values as kubectl does (YAML 1.1): runAsNonRoot: yes is true', () => {
    const text = stringify(plugin()).replace('runAsNonRoot: true', 'runAsNonRoot: yes');
    expect(text).toContain('runAsNonRoot: yes');
    expect(readPluginYaml(text).plugin.spec.sidecar.container.securityContext?.runAsNonRoot).toBe(true);
  });

  it('says what a ConfigMap given as plugin.yaml is and what to do, instead of "data: unknown field"', () => {
    const built = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'hello-executor-plugin' },
      data: { 'sidecar.container': 'name: hello\n' },
    };
    const [problem, ...rest] = problemsOf(built);
    expect(rest).toEqual([]);
    expect(problem).toMatch(
      /^kind: this is a ConfigMap \(kind: ConfigMap\), already a built plugin, not a plugin declaration; plugflow plugin build reads an ExecutorPlugin declaration/,
    );
    expect(problem).toContain('To install this one, run kubectl apply -f on it');
    expect(problemsOf({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' }, data: {} })[0]).toContain(
      'Write a plugin.yaml of kind ExecutorPlugin',
    );
    expect(problemsOf({ apiVersion: 'v1', kind: 'Workflow', metadata: { name: 'x' }, spec: { entrypoint: 'a' } })).toEqual([
      expect.stringMatching(/^kind: must be ExecutorPlugin, got "Workflow"; plugflow plugin build reads/),
    ]);
  });

  it('says what is wrong with an empty or multi-document plugin.yaml and what to do', () => {
    expect(problemsOf('# nothing\n')).toEqual([
      expect.stringMatching(/^is empty; plugflow plugin build reads an ExecutorPlugin declaration/),
    ]);
    const two = `${stringify(plugin())}---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: extra}\n`;
    expect(problemsOf(two)).toEqual([
      'holds 2 YAML documents (ExecutorPlugin "hello", ConfigMap "extra"); plugin.yaml declares exactly one ExecutorPlugin: keep the ExecutorPlugin and move the other documents to files of their own',
    ]);
  });

  it('accepts the ObjectMeta fields of spec document 3, warning about those not written to the ConfigMap', () => {
    const p = plugin();
    Object.assign(p.metadata, { creationTimestamp: null, namespace: 'team', finalizers: [], uid: 'abc', generateName: 'hello-' });
    const { plugin: read, warnings } = readPluginYaml(stringify(p));
    expect(read.metadata).toEqual({ name: 'hello', namespace: 'team', annotations: p.metadata.annotations });
    expect(warnings).toEqual([
      'metadata.uid is not written to the ConfigMap (only name, namespace, labels, annotations are); remove it from plugin.yaml',
      'metadata.generateName is not written to the ConfigMap (only name, namespace, labels, annotations are); remove it from plugin.yaml',
    ]);
    const bad = plugin();
    bad.metadata.ownerReferences = [{ kind: 'X' }];
    expect(problemsOf(bad)).toContain('metadata.ownerReferences[0].apiVersion: required field is missing');
  });

  it('checks label and annotation keys and values as Kubernetes does, naming the key', () => {
    const p = plugin();
    p.metadata.labels = { version: '>= v3.3', 'bad key!': 'x', 'example.com/ok': 'v1.2_3', 'Upper.Case/x': 'y', long: 'a'.repeat(64) };
    p.metadata.annotations = { 'bad key!': 'any text at all >= 3', 'Example.COM/fine': 'ok' };
    expect(problemsOf(p)).toEqual([
      `metadata.labels["version"]: the value ">= v3.3" must be empty or alphanumeric characters, '-', '_' or '.', starting and ending with an alphanumeric character; put free text in an annotation`,
      `metadata.labels["bad key!"]: the key has name part "bad key!", which must be alphanumeric characters, '-', '_' or '.', starting and ending with an alphanumeric character; a label key is [prefix/]name (Kubernetes refuses it otherwise)`,
      `metadata.labels["Upper.Case/x"]: the key has prefix "Upper.Case", which is not a DNS subdomain (lower-case letters, digits, '-' and '.'); a label key is [prefix/]name (Kubernetes refuses it otherwise)`,
      'metadata.labels["long"]: the value is longer than 63 characters; put long text in an annotation',
      `metadata.annotations["bad key!"]: the key has name part "bad key!", which must be alphanumeric characters, '-', '_' or '.', starting and ending with an alphanumeric character; an annotation key is [prefix/]name (Kubernetes refuses it otherwise)`,
    ]);
  });

  it('refuses volume mounts, which the agent pod cannot satisfy', () => {
    expect(problemsOf(withContainer((c) => (c.volumeMounts = [{ name: 'data', mountPath: '/data' }])))[0]).toMatch(
      /^sidecar is invalid: spec.sidecar.container.volumeMounts\[0\] \(data at \/data\) cannot be used/,
    );
  });

  it('reports every problem at once', () => {
    const p = withContainer((c) => {
      delete c.ports;
      delete c.resources.limits.cpu;
      delete c.securityContext.runAsUser;
    });
    expect(problemsOf(p)).toHaveLength(3);
  });
});
