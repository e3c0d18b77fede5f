import { describe, expect, it } from 'vitest';
import { compileBoolean } from './contracts.js';
import { eventEnvironment, eventMetadataFromHeaders, eventValueText } from './event.js';

describe('event metadata', () => {
  it('keeps only x- headers, lower-cased, as lists, and never authorization', () => {
    const meta = eventMetadataFromHeaders({
      'X-Github-Event': ['push'],
      Authorization: ['Bearer abc'],
      'Github-Event': ['push'],
      'X-Argo-E2E': 'true',
      'X-Multi': ['a', 'b'],
      'Content-Type': ['application/json'],
      'x-empty': undefined,
    });
    expect(meta).toEqual({ 'x-github-event': ['push'], 'x-argo-e2e': ['true'], 'x-multi': ['a', 'b'] });
    expect(Object.getPrototypeOf(meta)).toBeNull();
  });

  it('reads Node rawHeaders pairs, merging repeated and differently-cased names', () => {
    const meta = eventMetadataFromHeaders(['X-A', '1', 'authorization', 'secret', 'x-a', '2', 'Host', 'h']);
    expect(meta).toEqual({ 'x-a': ['1', '2'] });
  });

  it('builds the selector environment', () => {
    const env = eventEnvironment({ payload: { message: 'hi' }, headers: { 'X-Name': 'value' }, discriminator: 'd' });
    const sel = compileBoolean(
      'payload.message != nil && metadata["x-name"] == ["value"] && discriminator == "d" && namespace == ""',
      'selector',
    );
    expect(sel.evaluate(env)).toBe(true);
  });
});

describe('event values', () => {
  it('keeps strings plain and turns everything else into compact JSON with sorted keys', () => {
    expect(eventValueText('hello')).toBe('hello');
    expect(eventValueText(3)).toBe('3');
    expect(eventValueText(2n)).toBe('2');
    expect(eventValueText(true)).toBe('true');
    expect(eventValueText(null)).toBe('null');
    expect(eventValueText({ b: 1, a: [1, 'x'] })).toBe('{"a":[1,"x"],"b":1}');
  });
});
