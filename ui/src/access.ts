/**
 * What each operation of the UI needs the token to be allowed, and why a refused one is disabled.
 * Pure: tested beside.
 *
 * The server answers GET /api/v1/access/{ns} with a verdict per action (src/server/routes/access.ts),
 * each the access reviews of every call the operation makes. An operation is allowed when every
 * action it `checks` is; an action the server does not report is not known to be refused (the
 * call itself is still refused with the reason). A refusal says what the token may not do (the
 * server's words) and then this operation's own purpose: the server may phrase the purpose of
 * another action that needs the same access.
 */
import type { Access } from './types.js';

export type Operation =
  | 'submit'
  | 'submitTemplate'
  | 'resubmit'
  | 'retry'
  | 'suspend'
  | 'resume'
  | 'stop'
  | 'terminate'
  | 'delete'
  | 'logs'
  | 'cronSuspend'
  | 'cronResume'
  | 'templateUpdate'
  | 'cronUpdate'
  | 'cronBackfill';

export interface OperationAccess {
  /** The server's actions that must all be allowed. */
  checks: string[];
  /** What the token may then not do, after the server's "forbidden: the token may not …". */
  purpose: string;
  /** The API calls the operation makes (src/operations), which the server's check of it must cover. */
  calls: string;
}

export const OPERATIONS: Record<Operation, OperationAccess> = {
  submit: { checks: ['submit'], purpose: 'so it may not submit workflows there', calls: 'create workflows' },
  submitTemplate: {
    checks: ['submit'],
    purpose: 'so it may not submit workflows from templates there',
    calls: 'create workflows (reading the template the form shows)',
  },
  resubmit: { checks: ['resubmit'], purpose: 'so it may not resubmit workflows there', calls: 'get, create, update, patch workflows' },
  retry: {
    checks: ['retry'],
    purpose: 'so it may not retry workflows there',
    calls: 'get and patch workflows, update workflows/status, delete and get pods',
  },
  suspend: { checks: ['suspend'], purpose: 'so it may not suspend workflows there', calls: 'get and patch workflows' },
  resume: {
    checks: ['resume'],
    purpose: 'so it may not resume workflows there',
    calls: 'get and patch workflows, update workflows/status',
  },
  stop: { checks: ['stop'], purpose: 'so it may not stop workflows there', calls: 'get and patch workflows' },
  terminate: { checks: ['terminate'], purpose: 'so it may not terminate workflows there', calls: 'get and patch workflows' },
  delete: { checks: ['delete'], purpose: 'so it may not delete workflows there', calls: 'delete workflows' },
  logs: { checks: ['logs'], purpose: 'so it may not read the logs of pods there', calls: 'get pods/log' },
  cronSuspend: { checks: ['cronSuspend'], purpose: 'so it may not suspend cron workflows there', calls: 'patch cronworkflows' },
  cronResume: { checks: ['cronResume'], purpose: 'so it may not resume cron workflows there', calls: 'patch cronworkflows' },
  templateUpdate: { checks: ['templateUpdate'], purpose: 'so it may not edit workflow templates there', calls: 'update workflowtemplates' },
  cronUpdate: { checks: ['cronUpdate'], purpose: 'so it may not edit cron workflows there', calls: 'update cronworkflows' },
  cronBackfill: {
    checks: ['cronBackfill'],
    purpose: 'so it may not backfill cron workflows there',
    calls: 'get and patch cronworkflows',
  },
};

/** The server's refusal `forbidden: the token may not <verb> <resource> in namespace "<ns>", <purpose>`. */
const REFUSAL = /^(forbidden: the token may not .+ in namespace "[^"]*"), so it may not .*$/s;

/** The server's reason with this operation's purpose in place of whichever the server gave. */
export function withPurpose(reason: string, purpose: string): string {
  const m = REFUSAL.exec(reason);
  return m ? `${m[1]}, ${purpose}` : reason;
}

/** Why the operation is not possible now (no right, or `stateReason`), or undefined when it is. */
export function refusal(access: Record<string, Access>, op: Operation, stateReason?: string): string | undefined {
  const { checks, purpose } = OPERATIONS[op];
  for (const check of checks) {
    const a = access[check] ?? access['*'];
    if (a && !a.allowed) return a.reason ? withPurpose(a.reason, purpose) : 'not allowed';
  }
  return stateReason;
}
