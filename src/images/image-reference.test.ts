import { describe, expect, it } from 'vitest';
import { parseImageReference, registryAliases } from './image-reference.js';

describe('parseImageReference', () => {
  it('reads names as the container runtime does: Docker Hub and library/ by default, latest without tag', () => {
    expect(parseImageReference('alpine')).toEqual({
      host: 'registry-1.docker.io',
      registry: 'docker.io',
      repository: 'library/alpine',
      tag: 'latest',
      reference: 'latest',
    });
    expect(parseImageReference('argoproj/argosay:v2')).toMatchObject({
      registry: 'docker.io',
      repository: 'argoproj/argosay',
      reference: 'v2',
    });
    expect(parseImageReference('docker.io/alpine:3.20')).toMatchObject({ host: 'registry-1.docker.io', repository: 'library/alpine' });
    expect(parseImageReference('ghcr.io/org/team/tool:1.2')).toMatchObject({
      host: 'ghcr.io',
      registry: 'ghcr.io',
      repository: 'org/team/tool',
      tag: '1.2',
    });
    expect(parseImageReference('localhost/x')).toMatchObject({ host: 'localhost', repository: 'x', tag: 'latest' });
    expect(parseImageReference('127.0.0.1:5000/a/b:t')).toMatchObject({ host: '127.0.0.1:5000', repository: 'a/b', tag: 't' });
  });

  it('asks for the digest when the image is pinned, with or without a tag', () => {
    const d = `sha256:${'a'.repeat(64)}`;
    expect(parseImageReference(`reg:5000/x@${d}`)).toEqual({
      host: 'reg:5000',
      registry: 'reg:5000',
      repository: 'x',
      digest: d,
      reference: d,
    });
    expect(parseImageReference(`reg:5000/x:1@${d}`)).toMatchObject({ tag: '1', digest: d, reference: d });
  });

  it('refuses what is not an image reference, saying which part', () => {
    expect(() => parseImageReference('')).toThrow(/1 to 512 characters/);
    expect(() => parseImageReference('Upper/Case')).toThrow(/"Upper" is not a repository path component/);
    expect(() => parseImageReference('x@sha256:short')).toThrow(/is not a digest/);
    expect(() => parseImageReference('x:bad/tag')).toThrow('"x:bad" is not a registry host');
    expect(() => parseImageReference('reg:5000/a:t:u')).toThrow(/"a:t" is not a repository path component|not a tag/);
  });

  it('knows Docker Hub by its several names', () => {
    expect(registryAliases('docker.io')).toContain('index.docker.io');
    expect(registryAliases('ghcr.io')).toEqual(['ghcr.io']);
  });
});
