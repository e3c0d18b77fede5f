import { describe, expect, it } from 'vitest';
import { dataPlanFromEnv, transformData } from './data.js';

describe('data template transformations', () => {
  const keys = ['logs/a/main.log', 'logs/b/main.log', 'logs/b/other.txt'];

  it('applies each expression to the value the previous one gave, as the peer does', () => {
    expect(transformData(keys, [{ expression: 'filter(data, {# endsWith "main.log"})' }])).toEqual(['logs/a/main.log', 'logs/b/main.log']);
    expect(
      transformData(keys, [{ expression: 'filter(data, {# endsWith "main.log"})' }, { expression: 'map(data, {# + ".processed"})' }]),
    ).toEqual(['logs/a/main.log.processed', 'logs/b/main.log.processed']);
    expect(transformData(keys, [{ expression: 'len(data)' }])).toBe(3);
    expect(transformData(keys, [])).toEqual(keys);
  });

  it('names the step whose expression fails', () => {
    expect(() => transformData(keys, [{ expression: 'len(data)' }, { expression: 'data + ' }])).toThrow(
      /^data\.transformation\[1\]\.expression "data \+ ": /,
    );
  });

  it('reads its plan from the environment, refusing a missing or malformed one', () => {
    expect(() => dataPlanFromEnv({})).toThrow('PLUGFLOW_DATA is not set');
    expect(() => dataPlanFromEnv({ PLUGFLOW_DATA: '{' })).toThrow(/PLUGFLOW_DATA is not JSON/);
    expect(() => dataPlanFromEnv({ PLUGFLOW_DATA: '{}' })).toThrow('PLUGFLOW_DATA must hold {listing, transformation}');
    const plan = { listing: { bucket: 'b', key: 'k/', endpoint: 'http://s3' }, transformation: [] };
    expect(dataPlanFromEnv({ PLUGFLOW_DATA: JSON.stringify(plan) })).toEqual(plan);
  });
});
