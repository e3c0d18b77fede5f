import type { V1Container, V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { envReferences, resolveEnv, type EnvSources } from './env.js';

const pod: V1Pod = {
  metadata: { name: 'p', namespace: 'ns', uid: 'u1', labels: { app: 'a' } },
  spec: { containers: [], nodeName: 'n1', serviceAccountName: 'sa' },
};
const b64 = (s: string) => Buffer.from(s).toString('base64');
const sources: EnvSources = {
  configMaps: new Map([
    ['cm', { data: { A: 'from-cm', B: 'cm-b', 'bad-key': 'x' } }],
    ['missing', null],
  ]),
  secrets: new Map([['s', { data: { B: b64('from-secret'), token: b64('t0k') } }]]),
};
const node = { cpu: 4, memory: 8 * 2 ** 30, ephemeralStorage: 100 * 2 ** 30 };
const base = { KUBERNETES_SERVICE_HOST: '127.0.0.1' };

describe('resolveEnv', () => {
  it('layers service variables < envFrom (later wins) < env, skipping keys that are not C identifiers', () => {
    const c: V1Container = {
      name: 'c',
      envFrom: [{ configMapRef: { name: 'cm' } }, { secretRef: { name: 's' } }, { prefix: 'P_', configMapRef: { name: 'cm' } }],
      env: [{ name: 'A', value: 'from-env' }],
    };
    const env = resolveEnv(pod, c, sources, base, node);
    expect(env).toMatchObject({
      KUBERNETES_SERVICE_HOST: '127.0.0.1',
      A: 'from-env',
      B: 'from-secret',
      token: 't0k',
      P_A: 'from-cm',
      P_B: 'cm-b',
    });
    expect(env).not.toHaveProperty('bad-key');
  });

  it('expands $(VAR) in values from earlier variables only, leaving the rest', () => {
    const c: V1Container = {
      name: 'c',
      env: [
        { name: 'X', value: 'x$(LATER)-$(PATH)-$(KUBERNETES_SERVICE_HOST)' },
        { name: 'Y', value: '$(X)/$$(X)' },
        { name: 'LATER', value: 'l' },
      ],
    };
    const env = resolveEnv(pod, c, sources, base, node);
    expect(env.X).toBe('x$(LATER)-$(PATH)-127.0.0.1');
    expect(env.Y).toBe('x$(LATER)-$(PATH)-127.0.0.1/$(X)');
  });

  it('resolves key refs, field refs and resource refs', () => {
    const c: V1Container = {
      name: 'c',
      resources: { limits: { memory: '128Mi' }, requests: { cpu: '250m' } },
      env: [
        { name: 'CM', valueFrom: { configMapKeyRef: { name: 'cm', key: 'A' } } },
        { name: 'SEC', valueFrom: { secretKeyRef: { name: 's', key: 'token' } } },
        { name: 'OPT', valueFrom: { configMapKeyRef: { name: 'missing', key: 'k', optional: true } } },
        { name: 'POD', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
        { name: 'NS', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
        { name: 'UID', valueFrom: { fieldRef: { fieldPath: 'metadata.uid' } } },
        { name: 'APP', valueFrom: { fieldRef: { fieldPath: "metadata.labels['app']" } } },
        { name: 'IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
        { name: 'NODE', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } },
        { name: 'MEM_MI', valueFrom: { resourceFieldRef: { resource: 'limits.memory', divisor: '1Mi' } } },
        { name: 'CPU_LIMIT', valueFrom: { resourceFieldRef: { resource: 'limits.cpu' } } },
        { name: 'CPU_REQ_M', valueFrom: { resourceFieldRef: { resource: 'requests.cpu', divisor: '1m' } } },
        { name: 'CPU_REQ', valueFrom: { resourceFieldRef: { resource: 'requests.cpu' } } },
      ],
    };
    expect(resolveEnv(pod, c, sources, {}, node)).toEqual({
      CM: 'from-cm',
      SEC: 't0k',
      POD: 'p',
      NS: 'ns',
      UID: 'u1',
      APP: 'a',
      IP: '127.0.0.1',
      NODE: 'n1',
      MEM_MI: '128',
      CPU_LIMIT: '4',
      CPU_REQ_M: '250',
      CPU_REQ: '1',
    });
  });

  it('fails like CreateContainerConfigError on missing objects and keys', () => {
    const run = (env: V1Container['env'], envFrom?: V1Container['envFrom']) => () =>
      resolveEnv(pod, { name: 'c', env, envFrom }, sources, {}, node);
    expect(run([{ name: 'A', valueFrom: { configMapKeyRef: { name: 'missing', key: 'k' } } }])).toThrow(
      'configmap "missing" not found in namespace ns',
    );
    expect(run([{ name: 'A', valueFrom: { configMapKeyRef: { name: 'cm', key: 'nope' } } }])).toThrow(
      "couldn't find key nope in ConfigMap ns/cm",
    );
    expect(run([{ name: 'A', valueFrom: { secretKeyRef: { name: 's', key: 'nope' } } }])).toThrow("couldn't find key nope in Secret ns/s");
    expect(run([], [{ secretRef: { name: 'other' } }])).toThrow('secret "other" not found');
    expect(run([{ name: 'A', valueFrom: { fieldRef: { fieldPath: 'spec.bogus' } } }])).toThrow(
      'env A: fieldRef spec.bogus is not supported',
    );
  });

  it('lists what the container references', () => {
    const refs = envReferences({
      name: 'c',
      envFrom: [{ configMapRef: { name: 'a' } }],
      env: [{ name: 'X', valueFrom: { secretKeyRef: { name: 'b', key: 'k' } } }],
    });
    expect([...refs.configMaps, ...refs.secrets]).toEqual(['a', 'b']);
  });
});
