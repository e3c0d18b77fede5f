import { describe, expect, it } from 'vitest';
import { goArch, goOS, microTime, nodeObject, standardNodeLabels } from './node.js';

describe('the runner node', () => {
  it('names architectures and systems as Go (and so Kubernetes) does', () => {
    expect(goArch('x64')).toBe('amd64');
    expect(goArch('arm64')).toBe('arm64');
    expect(goArch('ia32')).toBe('386');
    expect(goArch('ppc64', true)).toBe('ppc64le');
    expect(goArch('ppc64', false)).toBe('ppc64');
    expect(goArch('mipsel')).toBe('mipsle');
    expect(goOS('linux')).toBe('linux');
    expect(goOS('win32')).toBe('windows');
  });

  it("carries the kubelet's standard labels with this machine's values", () => {
    const labels = nodeObject('plugflow-box', { cpu: 2, memory: 2 ** 30, ephemeralStorage: 2 ** 30 }, true, new Date().toISOString())
      .metadata!.labels!;
    const arch = process.arch === 'x64' ? 'amd64' : process.arch;
    expect(labels).toMatchObject({
      'kubernetes.io/hostname': 'plugflow-box',
      'kubernetes.io/os': process.platform,
      'kubernetes.io/arch': arch,
      'beta.kubernetes.io/os': process.platform,
      'beta.kubernetes.io/arch': arch,
      'plugflow.io/local-runner': 'true',
    });
    expect(standardNodeLabels('n', 'arm64', 'linux')).toEqual({
      'kubernetes.io/hostname': 'n',
      'kubernetes.io/os': 'linux',
      'kubernetes.io/arch': 'arm64',
      'beta.kubernetes.io/os': 'linux',
      'beta.kubernetes.io/arch': 'arm64',
    });
  });

  it('writes lease times with the six fractional digits a MicroTime needs', () => {
    expect(microTime(new Date('2026-11-23T22:01:02.345Z'))).toBe('2026-11-23T22:01:02.345000Z');
    expect(microTime(new Date('2026-11-23T22:01:02Z'))).toMatch(/^2026-11-23T22:01:02\.000000Z$/);
  });
});
