import { describe, expect, it } from 'vitest';
import type { Template } from '../api/index.js';
import { ArtifactPlanError, keyVariables, planArtifacts } from './plan.js';

const vars = keyVariables({ name: 'wf', namespace: 'ns', uid: 'u' }, 'wf-1');
const oauth2 = {
  clientIDSecret: { name: 'oauth-sec', key: 'clientID' },
  clientSecretSecret: { name: 'oauth-sec', key: 'clientSecret' },
  tokenURLSecret: { name: 'oauth-sec', key: 'tokenURL' },
  scopes: ['some', 'scopes'],
  endpointParams: [{ key: 'customkey', value: 'customvalue' }],
};

describe('the plan of http artifacts', () => {
  it('gives an OAuth2 input its client id, secret and token URL as variables, never values', () => {
    const t: Template = {
      name: 't',
      inputs: { artifacts: [{ name: 'in', path: '/in', http: { url: 'https://hdfs.example.com/f?op=OPEN', auth: { oauth2 } } }] },
    };
    const plan = planArtifacts(t, undefined, vars);
    expect(plan.inputs[0]!.source).toEqual({
      http: {
        url: 'https://hdfs.example.com/f?op=OPEN',
        oauth2: {
          clientIdEnv: 'PLUGFLOW_SECRET_0',
          clientSecretEnv: 'PLUGFLOW_SECRET_1',
          tokenUrlEnv: 'PLUGFLOW_SECRET_2',
          scopes: ['some', 'scopes'],
          endpointParams: [{ key: 'customkey', value: 'customvalue' }],
        },
      },
    });
    expect(plan.secrets.map((s) => s.ref.key)).toEqual(['clientID', 'clientSecret', 'tokenURL']);
  });

  it('refuses an OAuth2 record without one of its three Secrets, naming the field', () => {
    const t: Template = {
      name: 't',
      inputs: {
        artifacts: [{ name: 'in', path: '/in', http: { url: 'https://x/f', auth: { oauth2: { ...oauth2, tokenURLSecret: undefined } } } }],
      },
    };
    expect(() => planArtifacts(t, undefined, vars)).toThrow(ArtifactPlanError);
    expect(() => planArtifacts(t, undefined, vars)).toThrow(
      'template "t": inputs.artifacts[in].http.auth.oauth2.tokenURLSecret is required: the client-credentials grant needs clientIDSecret, clientSecretSecret and tokenURLSecret',
    );
  });

  it('uploads an http output to its own URL without a repository, and records the location as written', () => {
    const http = {
      url: 'https://hdfs.example.com/webhdfs/v1/f.txt?op=CREATE&overwrite=true',
      headers: [{ name: 'CustomHeader', value: 'CustomValue' }],
      auth: { basicAuth: { usernameSecret: { name: 'u', key: 'user' }, passwordSecret: { name: 'u', key: 'pass' } } },
    };
    const t: Template = {
      name: 't',
      outputs: {
        artifacts: [
          { name: 'out', path: '/out', http },
          { name: 'raw', path: '/raw.txt', archive: { none: {} }, http: { url: 'http://store:8080/raw.txt' } },
        ],
      },
    };
    const plan = planArtifacts(t, undefined, vars);
    expect(plan.outputs[0]).toEqual({
      name: 'out',
      http: {
        url: http.url,
        headers: [{ name: 'CustomHeader', value: 'CustomValue' }],
        usernameEnv: 'PLUGFLOW_SECRET_0',
        passwordEnv: 'PLUGFLOW_SECRET_1',
      },
      record: { name: 'out', path: '/out', http },
    });
    expect(plan.outputs[0]!.store).toBeUndefined();
    expect(plan.outputs[1]!.record).toEqual({
      name: 'raw',
      path: '/raw.txt',
      http: { url: 'http://store:8080/raw.txt' },
      archive: { none: {} },
    });
    expect(plan.packs.map((p) => [p.name, p.archive])).toEqual([
      ['out', 'tar'],
      ['raw', 'none'],
    ]);
  });
});
