/**
 * The `plugin` section of a template: an object with exactly one key, the name of the plugin
 * that runs it, whose value is that plugin's own configuration (spec documents 000 and 001).
 */
import { FieldError } from '../validation/field-error.js';
import type { FieldRef } from '../validation/field-path.js';

export interface PluginSection {
  /** The single key: the plugin's name. */
  name: string;
  /** The value under that key, passed to the plugin untouched. */
  config: unknown;
}

/**
 * Splits a plugin section into name and configuration. Errors name the field, e.g.
 * `spec.templates[2].plugin must have exactly one key, got 2 (a, b)`.
 */
export function parsePluginSection(value: unknown, field: FieldRef = 'plugin'): PluginSection {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    const got = value === null ? 'null' : Array.isArray(value) ? 'a list' : typeof value;
    throw new FieldError(field, `must be an object with exactly one key (the plugin's name), got ${got}`);
  }
  const keys = Object.keys(value);
  if (keys.length !== 1) {
    const listed = keys.length === 0 ? '' : ` (${keys.join(', ')})`;
    throw new FieldError(field, `must have exactly one key, got ${keys.length}${listed}`);
  }
  const name = keys[0]!;
  if (name.trim() === '') throw new FieldError(field, 'has an empty key; the key must be the plugin name');
  return { name, config: (value as Record<string, unknown>)[name] };
}
