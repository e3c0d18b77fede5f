import { describe, expect, it } from 'vitest';
import { errorMessage } from './error-message.js';

describe('errorMessage', () => {
  it('uses the message of an Error', () => {
    expect(errorMessage(new TypeError('bad type'))).toBe('bad type');
  });

  it('prefers describe() when an error offers one', () => {
    const err = Object.assign(new Error('short'), { describe: () => 'GET /api/v1/pods: 403 Forbidden: short' });
    expect(errorMessage(err)).toBe('GET /api/v1/pods: 403 Forbidden: short');
  });

  it('describes values thrown that are not errors', () => {
    expect(errorMessage('plain text')).toBe('plain text');
    expect(errorMessage(42)).toBe('42');
    expect(errorMessage(undefined)).toBe('undefined');
  });
});
