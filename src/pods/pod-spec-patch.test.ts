import { describe, expect, it } from 'vitest';
import { mergePodSpecPatch, parsePodSpecPatch } from './pod-spec-patch.js';

const spec = {
  restartPolicy: 'Never',
  nodeSelector: { disk: 'ssd', zone: 'a' },
  tolerations: [{ key: 'a', operator: 'Exists' }],
  containers: [
    { name: 'main', image: 'alpine', args: ['one'], env: [{ name: 'A', value: '1' }], resources: { limits: { cpu: '1' } } },
    { name: 'wait', image: 'plugflow' },
  ],
  volumes: [{ name: 'v', emptyDir: {} }],
};

describe('podSpecPatch', () => {
  it('merges containers by name and their env by name, keeping the rest', () => {
    const patch = parsePodSpecPatch(
      '{"containers":[{"name":"main","resources":{"limits":{"memory":"1Gi"}},"env":[{"name":"B","value":"2"},{"name":"A","value":"x"}]}]}',
      'p',
    );
    const out = mergePodSpecPatch(spec, patch);
    expect(out.containers[0]).toEqual({
      name: 'main',
      image: 'alpine',
      args: ['one'],
      env: [
        { name: 'A', value: 'x' },
        { name: 'B', value: '2' },
      ],
      resources: { limits: { cpu: '1', memory: '1Gi' } },
    });
    expect(out.containers[1]).toEqual(spec.containers[1]);
    expect(spec.containers[0].resources?.limits).toEqual({ cpu: '1' });
  });

  it('replaces plain lists, removes keys set to null and honours $patch: delete', () => {
    const patch = parsePodSpecPatch(
      [
        'tolerations: [{key: b, operator: Exists}]',
        'nodeSelector: {zone: null}',
        'containers: [{name: main, args: [two]}]',
        'volumes: [{name: v, $patch: delete}, {name: w, emptyDir: {}}]',
      ].join('\n'),
      'p',
    );
    const out = mergePodSpecPatch(spec, patch);
    expect(out.tolerations).toEqual([{ key: 'b', operator: 'Exists' }]);
    expect(out.nodeSelector).toEqual({ disk: 'ssd' });
    expect(out.containers[0].args).toEqual(['two']);
    expect(out.volumes).toEqual([{ name: 'w', emptyDir: {} }]);
  });

  it('names the origin of a bad patch', () => {
    expect(() => parsePodSpecPatch('{oops', 'template "t" podSpecPatch')).toThrow(/template "t" podSpecPatch is not valid YAML or JSON/);
    expect(() => parsePodSpecPatch('[1]', 'template "t" podSpecPatch')).toThrow(/must be an object/);
  });
});
