import { describe, expect, it } from 'vitest';
import { parseKnownImages } from './known-images.js';

describe('the images ConfigMap', () => {
  it('maps image names to entrypoint and cmd', () => {
    const images = parseKnownImages(
      'docker/whalesay:latest:\n  cmd: [cowsay]\nreg:5000/r:2:\n  entrypoint: [/r]\n  cmd: [--help]\n',
      'plugflow/plugflow-images',
    );
    expect(images.get('docker/whalesay:latest')).toEqual({ entrypoint: [], cmd: ['cowsay'] });
    expect(images.get('reg:5000/r:2')).toEqual({ entrypoint: ['/r'], cmd: ['--help'] });
    expect(parseKnownImages(undefined, 'x').size).toBe(0);
    expect(parseKnownImages('  ', 'x').size).toBe(0);
  });

  it('refuses a wrong entry, naming the ConfigMap, the key and the image', () => {
    const at = 'ConfigMap plugflow/plugflow-images key images';
    expect(() => parseKnownImages('[a]', 'plugflow/plugflow-images')).toThrow(`${at} must map image names to {entrypoint, cmd}`);
    expect(() => parseKnownImages('a: {cmd: echo}', 'plugflow/plugflow-images')).toThrow(`${at}: image "a": cmd must be a list of strings`);
    expect(() => parseKnownImages('a: {command: [x]}', 'plugflow/plugflow-images')).toThrow(`${at}: image "a" has unknown field "command"`);
    expect(() => parseKnownImages('a: {}', 'plugflow/plugflow-images')).toThrow(`${at}: image "a" must have entrypoint and/or cmd`);
    expect(() => parseKnownImages('a: [', 'plugflow/plugflow-images')).toThrow(/key images is not YAML/);
  });

  it('keeps user keys off object prototypes', () => {
    const images = parseKnownImages('__proto__:\n  cmd: [x]\n', 'ns/cm');
    expect(images.get('__proto__')).toEqual({ entrypoint: [], cmd: ['x'] });
    expect(({} as Record<string, unknown>).cmd).toBeUndefined();
  });
});
