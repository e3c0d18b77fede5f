import { describe, expect, it } from 'vitest';
import { credentialFor, credentialsFromSecret } from './pull-credentials.js';

const b64 = (s: string): string => Buffer.from(s).toString('base64');
const secret = (name: string, key: string, value: unknown) => ({ metadata: { name }, data: { [key]: b64(JSON.stringify(value)) } });

describe('pull secret credentials', () => {
  it('reads .dockerconfigjson with auth or username/password, keyed by host', () => {
    const creds = credentialsFromSecret(
      secret('regcred', '.dockerconfigjson', {
        auths: {
          'https://index.docker.io/v1/': { auth: b64('hub:pa:ss') },
          'reg.example:5000': { username: 'u', password: 'p' },
        },
      }),
    );
    expect(creds.get('index.docker.io')).toEqual({ username: 'hub', password: 'pa:ss', source: 'secret regcred' });
    expect(creds.get('reg.example:5000')).toMatchObject({ username: 'u', password: 'p' });
    expect(credentialFor('docker.io', [creds])).toMatchObject({ username: 'hub' });
    expect(credentialFor('other.io', [creds])).toBeUndefined();
  });

  it('reads the legacy .dockercfg and takes the first secret that matches', () => {
    const a = credentialsFromSecret(secret('a', '.dockercfg', { 'r.io': { username: 'first', password: 'x' } }));
    const b = credentialsFromSecret(secret('b', '.dockerconfigjson', { auths: { 'r.io': { username: 'second', password: 'y' } } }));
    expect(credentialFor('r.io', [a, b])).toMatchObject({ username: 'first', source: 'secret a' });
  });

  it('names the secret that is not a pull secret, never its values', () => {
    expect(() => credentialsFromSecret({ metadata: { name: 'tls' }, data: { 'tls.crt': b64('x') } })).toThrow(
      'secret tls: has neither .dockerconfigjson nor .dockercfg (is it an image pull secret?)',
    );
    expect(() => credentialsFromSecret({ metadata: { name: 'bad' }, data: { '.dockerconfigjson': b64('{nope') } })).toThrow(
      /secret bad: .dockerconfigjson is not JSON/,
    );
    expect(() =>
      credentialsFromSecret(secret('noauth', '.dockerconfigjson', { auths: { r: { auth: b64('secret-without-colon') } } })),
    ).toThrow(/secret noauth: the auth of "r" is not base64 of user:password/);
  });
});
