import { describe, expect, it } from 'vitest';
import { allHold, firstHolding, parseCondition, valueAtPath } from './resource-conditions.js';

const job = {
  metadata: { name: 'j', labels: { ready: 'yes' } },
  status: { succeeded: 3, failed: 0, phase: 'Succeeded', active: null, conditions: [{ type: 'Complete', status: 'True' }] },
};

const holds = (text: string, o: unknown = job) => allHold(parseCondition(text, 'c'), o);

describe('resource conditions (label-selector syntax over paths)', () => {
  it('compares integers with > and <', () => {
    expect(holds('status.succeeded > 2')).toBe(true);
    expect(holds('status.succeeded > 3')).toBe(false);
    expect(holds('status.failed < 1')).toBe(true);
    expect(holds('status.missing > 0')).toBe(false);
    expect(holds('status.phase > 0')).toBe(false);
  });

  it('matches equality, sets and existence as a label selector matches labels', () => {
    expect(holds('status.phase == Succeeded')).toBe(true);
    expect(holds('status.phase = Succeeded')).toBe(true);
    expect(holds('status.phase != Succeeded')).toBe(false);
    expect(holds('status.nothing != Succeeded')).toBe(true);
    expect(holds('status.phase in (Failed, Succeeded)')).toBe(true);
    expect(holds('status.phase notin (Failed, Error)')).toBe(true);
    expect(holds('metadata.labels.ready')).toBe(true);
    expect(holds('!status.nothing')).toBe(true);
    expect(holds('!metadata.labels.ready')).toBe(false);
    expect(holds('status.conditions.0.type == Complete')).toBe(true);
  });

  it('needs every requirement of a success condition, and any of a failure condition', () => {
    expect(holds('status.succeeded > 2, status.phase == Succeeded')).toBe(true);
    expect(holds('status.succeeded > 2, status.phase == Failed')).toBe(false);
    expect(firstHolding(parseCondition('status.failed > 0, status.phase == Succeeded', 'c'), job)?.key).toBe('status.phase');
    expect(firstHolding(parseCondition('status.failed > 0', 'c'), job)).toBeUndefined();
  });

  it('reads values as the peer prints them', () => {
    expect(valueAtPath(job, 'status.succeeded')).toBe('3');
    expect(valueAtPath(job, 'status.active')).toBe('');
    expect(valueAtPath(job, 'metadata.labels')).toBe('{"ready":"yes"}');
    expect(valueAtPath(job, 'status.conditions.x')).toBeUndefined();
    expect(valueAtPath(job, 'metadata.constructor')).toBeUndefined();
    expect(valueAtPath({ a: [1] }, 'a.length')).toBeUndefined();
  });

  it('refuses malformed conditions, naming the field and the requirement', () => {
    expect(() => parseCondition('status.phase >> 2', 'f')).toThrow(/^f "status\.phase >> 2"/);
    expect(() => parseCondition('status.succeeded > two', 'f')).toThrow('"status.succeeded > two": ">" needs an integer');
    expect(() => parseCondition('a in (x', 'f')).toThrow(/unclosed/);
    expect(() => parseCondition('a,,b', 'f')).toThrow(/empty requirement/);
    expect(() => parseCondition('status.phase == a b', 'f')).toThrow(/not a valid value/);
    expect(parseCondition('', 'f')).toEqual([]);
  });
});
