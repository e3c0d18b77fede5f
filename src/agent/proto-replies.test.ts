/** Plugin replies are user JSON (issue 10 item 1): `__proto__` is refused, `constructor` is data. */
import { afterEach, describe, expect, it } from 'vitest';
import { classifyReply } from './plugin-client.js';
import { checkReply } from './reply-validation.js';

afterEach(() => {
  delete (Object.prototype as Record<string, unknown>).polluted;
  delete (Object.prototype as Record<string, unknown>).phase;
});

describe('plugin replies with prototype keys', () => {
  it('a reply with __proto__ anywhere fails the task naming where', () => {
    for (const body of [
      '{"__proto__": {"polluted": 1}, "node": {"phase": "Succeeded"}}',
      '{"node": {"phase": "Succeeded", "outputs": {"artifacts": [{"name": "a", "s3": {"__proto__": {"polluted": 1}}}]}}}',
      '{"node": {"\\u005f_proto__": {"phase": "Succeeded"}}}',
    ]) {
      const out = classifyReply('hello', 200, body);
      expect(out).toMatchObject({
        kind: 'fatal',
        message: expect.stringMatching(/^plugin hello replied with a key named "__proto__" at /),
      });
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('constructor and prototype keys are data, and an inherited phase is never read', () => {
    const out = classifyReply('hello', 200, '{"node": {"constructor": {"prototype": {"phase": "Succeeded"}}}}');
    expect(out.kind).toBe('reply');
    if (out.kind !== 'reply') return;
    const checked = checkReply('hello', out.reply);
    expect(checked.ok).toBe(false);
    expect(({} as Record<string, unknown>).phase).toBeUndefined();
  });
});
