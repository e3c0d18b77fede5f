import { describe, expect, it } from 'vitest';
import { FieldError } from '../validation/field-error.js';
import { FieldPath } from '../validation/field-path.js';
import { parsePluginSection } from './plugin-section.js';

describe('parsePluginSection', () => {
  it('returns the single key as the plugin name and its value as configuration', () => {
    expect(parsePluginSection({ hello: {} })).toEqual({ name: 'hello', config: {} });
    expect(parsePluginSection({ slack: { channel: '#ops', text: 'hi' } })).toEqual({
      name: 'slack',
      config: { channel: '#ops', text: 'hi' },
    });
    expect(parsePluginSection({ bare: null })).toEqual({ name: 'bare', config: null });
  });

  it('names the field and lists the keys when there are several', () => {
    const field = FieldPath.of('spec').child('templates').index(2).child('plugin');
    expect(() => parsePluginSection({ a: {}, b: {} }, field)).toThrow(new FieldError(field, 'must have exactly one key, got 2 (a, b)'));
    expect(() => parsePluginSection({ a: {}, b: {} }, field)).toThrow('spec.templates[2].plugin must have exactly one key, got 2 (a, b)');
  });

  it('rejects an empty section', () => {
    expect(() => parsePluginSection({}, 'spec.templates[0].plugin')).toThrow('spec.templates[0].plugin must have exactly one key, got 0');
  });

  it.each<[unknown, string]>([
    [null, 'got null'],
    ['hello', 'got string'],
    [['hello'], 'got a list'],
  ])('rejects %j as not an object', (value, why) => {
    expect(() => parsePluginSection(value, 'plugin')).toThrow(/^plugin must be an object with exactly one key/);
    expect(() => parsePluginSection(value, 'plugin')).toThrow(why);
  });

  it('rejects a blank plugin name', () => {
    expect(() => parsePluginSection({ ' ': {} }, 'plugin')).toThrow('plugin has an empty key');
  });
});
