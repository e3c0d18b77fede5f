import { describe, expect, it } from 'vitest';
import { changedParameters, initialValues, resubmitCommand } from './resubmit.js';

const params = [
  { name: 'who', value: 'world' },
  { name: 'cfg', valueFrom: { configMapKeyRef: { name: 'c', key: 'k' } } },
  { name: 'n', value: '3' },
];

describe('the Resubmit form', () => {
  it('starts from the workflow’s values', () => {
    expect(initialValues(params)).toEqual({ who: 'world', cfg: '', n: '3' });
  });

  it('sends only what changed, as name=value, in order', () => {
    expect(changedParameters(params, { who: 'Ada', cfg: '', n: '3' })).toEqual(['who=Ada']);
    expect(changedParameters(params, { who: 'world', cfg: 'x=y', n: '' })).toEqual(['cfg=x=y', 'n=']);
    expect(changedParameters(params, initialValues(params))).toEqual([]);
  });

  it('shows the CLI command, quoted', () => {
    expect(resubmitCommand('wf', 'ns', ["who=it's me"])).toBe(`plugflow resubmit wf -n ns -p 'who=it'\\''s me'`);
  });
});
