import { describe, expect, it } from 'vitest';
import { parseChallenge } from './registry-client.js';

describe('parseChallenge', () => {
  it('reads a Bearer challenge with quoted parameters', () => {
    expect(parseChallenge('Bearer realm="https://auth.example/token",service="registry.example",scope="repository:a/b:pull"')).toEqual({
      scheme: 'bearer',
      params: { realm: 'https://auth.example/token', service: 'registry.example', scope: 'repository:a/b:pull' },
    });
  });
  it('reads Basic and unquoted parameters, and nothing from an empty header', () => {
    expect(parseChallenge('Basic realm=Registry')).toEqual({ scheme: 'basic', params: { realm: 'Registry' } });
    expect(parseChallenge(undefined)).toBeUndefined();
  });
});
