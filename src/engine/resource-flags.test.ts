import { describe, expect, it } from 'vitest';
import { parseFlags } from './resource-flags.js';

describe('resource flags (the kubectl arguments plugflow honours)', () => {
  it('reads TYPE NAME and TYPE/NAME targets', () => {
    expect(parseFlags(['pod', 'p1'], 'patch', 'f').targets).toEqual({ type: 'pod', names: ['p1'] });
    expect(parseFlags(['job.batch/a', 'job.batch/b'], 'delete', 'f').targets).toEqual({ type: 'job.batch', names: ['a', 'b'] });
    expect(parseFlags([], 'create', 'f').targets).toBeUndefined();
  });

  it('reads selectors, namespace and delete options', () => {
    const f = parseFlags(
      ['configmap', '--selector', 'cleanup=true', '-n', 'other', '--cascade=foreground', '--grace-period=0', '--wait=false'],
      'delete',
      'f',
    );
    expect(f).toMatchObject({
      targets: { type: 'configmap', names: [] },
      selector: 'cleanup=true',
      namespace: 'other',
      cascade: 'Foreground',
      gracePeriodSeconds: 0,
      wait: false,
    });
    expect(parseFlags(['pods', '-l=a=b'], 'delete', 'f').selector).toBe('a=b');
    expect(parseFlags(['pods', '--all'], 'delete', 'f').all).toBe(true);
  });

  it('maps --validate and --dry-run to the API server options', () => {
    expect(parseFlags(['--validate=false'], 'create', 'f').fieldValidation).toBe('Ignore');
    expect(parseFlags(['--validate'], 'apply', 'f').fieldValidation).toBe('Strict');
    expect(parseFlags(['--dry-run=server'], 'create', 'f').dryRun).toBe(true);
  });

  it('refuses every flag it cannot honour, naming it and its index', () => {
    expect(() => parseFlags(['pods', '--now'], 'delete', 'spec.x.flags')).toThrow(
      'spec.x.flags[1] "--now": not a flag plugflow can honour',
    );
    expect(() => parseFlags(['--dry-run=client'], 'create', 'f')).toThrow(/only --dry-run=server/);
    expect(() => parseFlags(['-l', 'a=b'], 'create', 'f')).toThrow('f[0] "-l": -l means nothing for action create');
    expect(() => parseFlags(['--selector'], 'delete', 'f')).toThrow(/needs a value/);
    expect(() => parseFlags(['--ignore-not-found=false'], 'delete', 'f')).toThrow(/always deletes with --ignore-not-found/);
    expect(() => parseFlags(['pod', 'x'], 'create', 'f')).toThrow(/takes its object from the manifest/);
    expect(() => parseFlags(['pod', 'x', '-l', 'a=b'], 'delete', 'f')).toThrow(/cannot be combined/);
  });
});
