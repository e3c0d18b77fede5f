import { describe, expect, it } from 'vitest';
import { ArchiveQueryError, decodeCursor, encodeCursor, pageQuery, parseLabelSelector, whereClause } from './archive-query.js';

describe('parseLabelSelector', () => {
  it('reads the equality, set and existence forms', () => {
    expect(parseLabelSelector('app=web, tier==db,env!=prod')).toEqual([
      { key: 'app', op: 'in', values: ['web'] },
      { key: 'tier', op: 'in', values: ['db'] },
      { key: 'env', op: 'notin', values: ['prod'] },
    ]);
    expect(parseLabelSelector('team in (a, b),stage notin (x),example.com/owner,!skip')).toEqual([
      { key: 'team', op: 'in', values: ['a', 'b'] },
      { key: 'stage', op: 'notin', values: ['x'] },
      { key: 'example.com/owner', op: 'exists' },
      { key: 'skip', op: '!exists' },
    ]);
    expect(parseLabelSelector('')).toEqual([]);
  });

  it('refuses what is not a selector, naming the part', () => {
    expect(() => parseLabelSelector('a=b c')).toThrow(/"a=b c" is not a requirement/);
    expect(() => parseLabelSelector("a=b'; drop table x")).toThrow(ArchiveQueryError);
    expect(() => parseLabelSelector('a>1')).toThrow(/not a label key|not a requirement/);
  });
});

describe('the bounds of a selector (each requirement is a subquery)', () => {
  it('answers up to 20 requirements and 100 values, and refuses more, naming the bound', () => {
    const terms = (n: number) => Array.from({ length: n }, (_, i) => `k${i}=v`).join(',');
    expect(parseLabelSelector(terms(20))).toHaveLength(20);
    expect(() => parseLabelSelector(terms(21))).toThrow('labelSelector: more than 20 requirements; narrow it');
    const values = (n: number) => `k in (${Array.from({ length: n }, (_, i) => `v${i}`).join(',')})`;
    expect(parseLabelSelector(values(100))[0]).toMatchObject({ op: 'in' });
    expect(() => parseLabelSelector(values(101))).toThrow('labelSelector: more than 100 values in all; narrow it');
    expect(() => parseLabelSelector('a,'.repeat(3000))).toThrow('labelSelector: 6000 characters; at most 4096 are answered');
  });

  it('refuses a selector of thousands of terms before building any SQL', () => {
    const huge = Array.from({ length: 5000 }, (_, i) => `k${i}`).join(',');
    expect(() => whereClause({ labelSelector: huge })).toThrow(ArchiveQueryError);
  });
});

describe('the SQL of a filter', () => {
  it('keeps every value out of the SQL text', () => {
    const q = whereClause({ namespaces: ['team-a'], phases: ['Failed', 'Error'], labelSelector: 'owner=obrien-x' });
    expect(q.sql).toBe(
      'w.namespace = $1 and w.phase = any($2) and exists (select 1 from archived_workflow_labels l where l.uid = w.uid and l.key = $3 and l.value = any($4))',
    );
    expect(q.params).toEqual(['team-a', ['Failed', 'Error'], 'owner', ['obrien-x']]);
  });

  it('reads every namespace when none is named, and refuses an unfinished phase', () => {
    expect(whereClause({}).sql).toBe('true');
    expect(() => whereClause({ phases: ['Running'] })).toThrow(/"Running" is not a phase of a finished workflow/);
  });

  it('pages by (finished_at, uid) from the cursor, reading one row more than the page', () => {
    const cursor = encodeCursor({ t: '2026-11-28T10:00:00.000Z', uid: '0b7c6b8e-1f7e-4c1e-9d1e-1e2f3a4b5c6d' });
    const q = pageQuery('w.uid', { namespaces: ['a'] }, { limit: 50, cursor });
    expect(q.sql).toBe(
      'select w.uid from archived_workflows w where w.namespace = $1 and (w.finished_at, w.uid) < ($2::timestamptz, $3::uuid) order by w.finished_at desc, w.uid desc limit $4',
    );
    expect(q.params).toEqual(['a', '2026-11-28T10:00:00.000Z', '0b7c6b8e-1f7e-4c1e-9d1e-1e2f3a4b5c6d', 51]);
    expect(() => pageQuery('w.uid', {}, { limit: 0 })).toThrow(/limit/);
    expect(() => pageQuery('w.uid', {}, { limit: 501 })).toThrow(/limit/);
  });

  it('refuses a cursor it did not give out', () => {
    expect(decodeCursor(encodeCursor({ t: '2026-01-01T00:00:00Z', uid: '0b7c6b8e-1f7e-4c1e-9d1e-1e2f3a4b5c6d' })).t).toBe(
      '2026-01-01T00:00:00Z',
    );
    expect(() => decodeCursor('bm9wZQ')).toThrow(/not a cursor/);
    expect(() => decodeCursor(Buffer.from('["x", "y"]').toString('base64url'))).toThrow(/not a cursor/);
  });
});
