import { describe, expect, it } from 'vitest';
import { OPERATIONS, refusal, withPurpose } from './access.js';

const patch = (purpose: string) => ({
  allowed: false,
  reason: `forbidden: the token may not patch workflows in namespace "team", so it may not ${purpose} workflows there`,
});

describe('why an operation is refused', () => {
  it("names each operation's own purpose, whichever action the server's cached review was asked for first", () => {
    // The server answers every action that needs `patch workflows` with the first one's purpose.
    const access = { retry: patch('stop'), suspend: patch('stop'), resume: patch('stop'), stop: patch('stop'), terminate: patch('stop') };
    for (const op of ['retry', 'suspend', 'resume', 'stop', 'terminate'] as const) {
      expect(refusal(access, op)).toBe(
        `forbidden: the token may not patch workflows in namespace "team", so it may not ${op} workflows there`,
      );
    }
  });

  it('leaves any other reason as the server gave it, and says "not allowed" without one', () => {
    expect(withPurpose('could not ask what you may do: Failed to fetch', 'so it may not x')).toBe(
      'could not ask what you may do: Failed to fetch',
    );
    expect(refusal({ '*': { allowed: false, reason: 'down' } }, 'retry')).toBe('down');
    expect(refusal({ delete: { allowed: false } }, 'delete')).toBe('not allowed');
  });

  it('checks Submit, template forms and CronWorkflow suspend/resume, which were never checked', () => {
    const create = {
      allowed: false,
      reason: 'forbidden: the token may not create workflows in namespace "team", so it may not submit workflows there',
    };
    expect(refusal({ submit: create }, 'submit')).toMatch(/may not create workflows .*so it may not submit workflows there$/);
    expect(refusal({ submit: create }, 'submitTemplate')).toMatch(/so it may not submit workflows from templates there$/);
    const cron = {
      allowed: false,
      reason: 'forbidden: the token may not patch cronworkflows in namespace "team", so it may not suspend cron workflows there',
    };
    expect(refusal({ cronSuspend: cron }, 'cronSuspend')).toMatch(/may not patch cronworkflows/);
    expect(refusal({ cronResume: cron }, 'cronResume')).toMatch(/so it may not resume cron workflows there$/);
  });

  it('prefers a refused right to the state, and gives the state when allowed', () => {
    expect(refusal({ retry: { allowed: true } }, 'retry', 'only a Failed workflow')).toBe('only a Failed workflow');
    expect(refusal({}, 'stop')).toBeUndefined();
  });

  it("says every API call of Retry, so the server's check can cover them all", () => {
    expect(OPERATIONS.retry.calls).toMatch(/delete and get pods/);
    expect(OPERATIONS.retry.calls).toMatch(/update workflows\/status/);
  });
});
