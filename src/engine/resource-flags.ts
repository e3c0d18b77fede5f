/**
 * `resource.flags`: the peer passes them to kubectl; plugflow makes the API calls itself, so it
 * reads the kubectl arguments that mean something for these actions and refuses every other one
 * by name (a flag is never silently dropped):
 *
 *   TYPE NAME…, TYPE/NAME   which objects (get, patch, delete; the manifest otherwise)
 *   -l, --selector          delete, get: the objects matching a label selector
 *   --field-selector        delete: the objects matching a field selector
 *   --all                   delete: every object of TYPE in the namespace
 *   -n, --namespace         the namespace of the objects (default: the manifest's, else the workflow's)
 *   --ignore-not-found      delete: always on, as in the peer; accepted
 *   --cascade               delete: background (default), foreground, orphan
 *   --grace-period          delete: seconds
 *   --wait                  delete: wait until the objects are gone (default true, as kubectl)
 *   --validate              create/apply/replace/patch: strict|true, warn, ignore|false
 *   --server-side, --force-conflicts   apply: plugflow always applies server-side, taking over conflicts
 *   --dry-run=server        validate and admit without storing
 */
import { FieldError } from '../api/index.js';
import type { ResourceAction } from '../api/index.js';

export interface ResourceFlags {
  /** Positional arguments: `[TYPE, NAME…]` or `[TYPE/NAME…]`. */
  targets: { type: string; names: string[] } | undefined;
  selector?: string;
  fieldSelector?: string;
  all: boolean;
  namespace?: string;
  cascade: 'Background' | 'Foreground' | 'Orphan';
  gracePeriodSeconds?: number;
  wait: boolean;
  fieldValidation?: 'Strict' | 'Warn' | 'Ignore';
  dryRun: boolean;
}

const BOOLEAN = new Set(['true', 'false']);

const CASCADE: Readonly<Record<string, ResourceFlags['cascade']>> = {
  background: 'Background',
  true: 'Background',
  foreground: 'Foreground',
  orphan: 'Orphan',
  false: 'Orphan',
};

const VALIDATION: Readonly<Record<string, NonNullable<ResourceFlags['fieldValidation']>>> = {
  strict: 'Strict',
  true: 'Strict',
  warn: 'Warn',
  ignore: 'Ignore',
  false: 'Ignore',
};

export function parseFlags(flags: readonly string[], action: ResourceAction, field: string): ResourceFlags {
  const out: ResourceFlags = { targets: undefined, all: false, cascade: 'Background', wait: true, dryRun: false };
  const positional: string[] = [];
  const bad = (i: number, why: string): never => {
    throw new FieldError(`${field}[${i}]`, `${JSON.stringify(flags[i])}: ${why}`);
  };
  const choice = <T>(i: number, v: string, map: Readonly<Record<string, T>>, why: string): T => {
    if (!Object.prototype.hasOwnProperty.call(map, v)) bad(i, why);
    return map[v]!;
  };
  const only = (i: number, actions: ResourceAction[], flag: string): void => {
    if (!actions.includes(action)) bad(i, `${flag} means nothing for action ${action} (only ${actions.join(', ')})`);
  };
  for (let i = 0; i < flags.length; i++) {
    const arg = flags[i]!;
    if (!arg.startsWith('-') || arg === '-') {
      positional.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const flag = eq < 0 ? arg : arg.slice(0, eq);
    const inline = eq < 0 ? undefined : arg.slice(eq + 1);
    const value = (): string => {
      if (inline !== undefined) return inline;
      if (i + 1 >= flags.length) bad(i, `${flag} needs a value`);
      return flags[++i]!;
    };
    const bool = (): boolean => {
      if (inline === undefined) return true;
      if (!BOOLEAN.has(inline)) bad(i, `${flag} is true or false`);
      return inline === 'true';
    };
    switch (flag) {
      case '-l':
      case '--selector':
        only(i, ['get', 'delete'], flag);
        out.selector = value();
        break;
      case '--field-selector':
        only(i, ['delete'], flag);
        out.fieldSelector = value();
        break;
      case '--all':
        only(i, ['delete'], flag);
        out.all = bool();
        break;
      case '-n':
      case '--namespace':
        out.namespace = value();
        break;
      case '--ignore-not-found':
        only(i, ['delete'], flag);
        if (!bool()) bad(i, 'plugflow (like the peer) always deletes with --ignore-not-found');
        break;
      case '--cascade':
        only(i, ['delete'], flag);
        out.cascade = choice(i, inline ?? 'background', CASCADE, '--cascade is background, foreground or orphan');
        break;
      case '--grace-period': {
        only(i, ['delete'], flag);
        const v = value();
        if (!/^-?\d+$/.test(v)) bad(i, '--grace-period is a number of seconds');
        const n = Number(v);
        if (n >= 0) out.gracePeriodSeconds = n;
        break;
      }
      case '--wait':
        only(i, ['delete'], flag);
        out.wait = bool();
        break;
      case '--validate':
        only(i, ['create', 'apply', 'replace', 'patch'], flag);
        out.fieldValidation = choice(i, inline ?? 'strict', VALIDATION, '--validate is strict, warn, ignore, true or false');
        break;
      case '--server-side':
      case '--force-conflicts':
        only(i, ['apply'], flag);
        if (!bool()) bad(i, 'plugflow applies server-side and takes over conflicting fields; it cannot apply client-side');
        break;
      case '--dry-run': {
        const v = inline ?? 'server';
        if (v === 'none') break;
        if (v !== 'server') bad(i, 'only --dry-run=server (or none) can be honoured: there is no client-side kubectl here');
        out.dryRun = true;
        break;
      }
      default:
        bad(i, 'not a flag plugflow can honour for resource templates (see the engine README, "Resource templates")');
    }
  }
  out.targets = targetsOf(positional, action, field);
  if ((out.selector !== undefined || out.fieldSelector !== undefined || out.all) && out.targets?.names.length) {
    throw new FieldError(field, 'names and a selector (or --all) cannot be combined, as in kubectl');
  }
  return out;
}

function targetsOf(positional: string[], action: ResourceAction, field: string): ResourceFlags['targets'] {
  if (positional.length === 0) return undefined;
  if (action === 'create' || action === 'apply' || action === 'replace') {
    throw new FieldError(field, `action ${action} takes its object from the manifest, not from ${JSON.stringify(positional.join(' '))}`);
  }
  if (positional.every((p) => p.includes('/'))) {
    const types = new Set(positional.map((p) => p.slice(0, p.indexOf('/'))));
    if (types.size > 1) throw new FieldError(field, `objects of one type only, not ${[...types].join(', ')}`);
    return { type: [...types][0]!, names: positional.map((p) => p.slice(p.indexOf('/') + 1)) };
  }
  if (positional.some((p) => p.includes('/'))) throw new FieldError(field, 'give either TYPE NAME… or TYPE/NAME…, not both');
  const [type, ...names] = positional;
  if (type!.includes(',')) throw new FieldError(field, `objects of one type only, not ${JSON.stringify(type)}`);
  return { type: type!, names };
}
