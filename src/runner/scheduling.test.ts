import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { requirementMatches, unschedulableReason } from './scheduling.js';

const node: V1Node = { metadata: { name: 'local', labels: { 'kubernetes.io/os': 'linux', disk: 'ssd', cores: '8' } } };
const pod = (spec: Partial<NonNullable<V1Pod['spec']>>): V1Pod => ({ spec: { containers: [], ...spec } });

describe('unschedulableReason', () => {
  it('accepts a plain pod for the default scheduler', () => {
    expect(unschedulableReason(pod({}), node)).toBeUndefined();
    expect(unschedulableReason(pod({ schedulerName: 'default-scheduler' }), node)).toBeUndefined();
  });

  it('leaves pods of other schedulers alone', () => {
    expect(unschedulableReason(pod({ schedulerName: 'volcano' }), node)).toMatch(/schedulerName "volcano"/);
    expect(unschedulableReason(pod({ schedulerName: 'volcano' }), node, ['volcano'])).toBeUndefined();
  });

  it('checks nodeSelector and required node affinity', () => {
    expect(unschedulableReason(pod({ nodeSelector: { disk: 'ssd' } }), node)).toBeUndefined();
    expect(unschedulableReason(pod({ nodeSelector: { disk: 'hdd' } }), node)).toMatch(/nodeSelector disk=hdd/);
    const affinity = (operator: string, values?: string[]) => ({
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'disk', operator, values }] }] },
      },
    });
    expect(unschedulableReason(pod({ affinity: affinity('In', ['ssd', 'nvme']) }), node)).toBeUndefined();
    expect(unschedulableReason(pod({ affinity: affinity('NotIn', ['ssd']) }), node)).toMatch(/affinity/);
  });

  it('honours taints and tolerations', () => {
    const tainted: V1Node = { ...node, spec: { taints: [{ key: 'gpu', value: 'yes', effect: 'NoSchedule' }] } };
    expect(unschedulableReason(pod({}), tainted)).toMatch(/taint gpu=yes:NoSchedule/);
    expect(unschedulableReason(pod({ tolerations: [{ key: 'gpu', operator: 'Exists' }] }), tainted)).toBeUndefined();
    expect(
      unschedulableReason(pod({ tolerations: [{ key: 'gpu', operator: 'Equal', value: 'yes', effect: 'NoSchedule' }] }), tainted),
    ).toBeUndefined();
    expect(unschedulableReason(pod({ tolerations: [{ key: 'gpu', operator: 'Equal', value: 'no' }] }), tainted)).toMatch(/taint/);
  });
});

describe('requirementMatches', () => {
  const labels = { a: '5', b: 'x' };
  it('implements every operator', () => {
    expect(requirementMatches({ key: 'a', operator: 'Gt', values: ['4'] }, labels)).toBe(true);
    expect(requirementMatches({ key: 'a', operator: 'Lt', values: ['4'] }, labels)).toBe(false);
    expect(requirementMatches({ key: 'b', operator: 'Gt', values: ['4'] }, labels)).toBe(false);
    expect(requirementMatches({ key: 'c', operator: 'DoesNotExist' }, labels)).toBe(true);
    expect(requirementMatches({ key: 'b', operator: 'Exists' }, labels)).toBe(true);
    expect(requirementMatches({ key: 'c', operator: 'NotIn', values: ['x'] }, labels)).toBe(true);
    expect(requirementMatches({ key: 'b', operator: 'Bogus' }, labels)).toBe(false);
  });
});
