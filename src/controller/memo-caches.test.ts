import { describe, expect, it } from 'vitest';
import { evictOldest, MAX_CACHE_BYTES, parseEntries } from './memo-caches.js';

const entry = (at: string, size = 10) =>
  JSON.stringify({ nodeID: `n-${at}`, outputs: { result: 'x'.repeat(size) }, creationTimestamp: at, lastHitTimestamp: at });

describe('memoize cache data', () => {
  it('reads entries and leaves out values that are not entries, without touching prototypes', () => {
    // As the API server hands it over: JSON, where "__proto__" is an ordinary key.
    const data = JSON.parse(
      JSON.stringify({
        good: entry('2024-01-01T00:00:00Z'),
        'not-json': '{',
        list: '[]',
        'no-time': JSON.stringify({ nodeID: 'x', outputs: {} }),
      }).replace(
        /^\{/,
        `{"__proto__":${JSON.stringify(JSON.stringify({ nodeID: 'p', outputs: { polluted: 'yes' }, creationTimestamp: '2024-01-01T00:00:00Z' }))},`,
      ),
    ) as Record<string, string>;
    const entries = parseEntries(data);
    expect(Object.keys(entries).sort()).toEqual(['__proto__', 'good'].sort());
    expect(entries.good).toMatchObject({ nodeID: 'n-2024-01-01T00:00:00Z', outputs: { result: 'x'.repeat(10) } });
    expect(({} as Record<string, unknown>).outputs).toBeUndefined();
    expect(entries.__proto__?.lastHitTimestamp).toBe('2024-01-01T00:00:00Z');
  });

  it('evicts the oldest entries until the data fits, never the one being stored', () => {
    const big = Math.floor(MAX_CACHE_BYTES / 4);
    const data: Record<string, string> = {
      oldest: entry('2024-01-01T00:00:00Z', big),
      middle: entry('2024-01-02T00:00:00Z', big),
      newest: entry('2024-01-03T00:00:00Z', big),
      broken: 'not an entry',
    };
    data.incoming = entry('2023-01-01T00:00:00Z', big);
    expect(evictOldest(data, 'incoming')).toEqual(['broken', 'oldest']);
    expect(Object.keys(data).sort()).toEqual(['incoming', 'middle', 'newest']);
    expect(evictOldest({ a: entry('2024-01-01T00:00:00Z') }, 'a')).toEqual([]);
  });
});
