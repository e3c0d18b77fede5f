/**
 * `successCondition` / `failureCondition` of resource templates: the peer's language, which is a
 * Kubernetes label selector whose keys are paths into the object (`status.succeeded > 2`,
 * `status.phase in (Failed, Error)`, `metadata.labels.ready`, `!status.failed`).
 *
 * A requirement's key is a dotted path (`status.replicaStatuses.Worker.succeeded`; a number
 * steps into an array: `status.conditions.0.type`). Its value at that path, as text (numbers as
 * written, booleans `true`/`false`, null as "", objects and arrays as JSON), is matched as a label
 * selector matches a label: `=`/`==`/`in` need the path to exist and the value among those given;
 * `!=`/`notin` hold when the path is missing or the value is not among them; `>`/`<` need an
 * integer at the path; a bare key needs the path to exist; `!key` needs it to be missing.
 *
 * The peer's combination, kept: a success condition holds when EVERY requirement holds; a
 * failure condition holds when ANY of its requirements holds.
 */
import { FieldError } from '../api/index.js';

export type Operator = '=' | '==' | '!=' | 'in' | 'notin' | '>' | '<' | 'exists' | '!';

export interface Requirement {
  key: string;
  operator: Operator;
  values: string[];
}

const KEY = /^[A-Za-z0-9]([A-Za-z0-9._/-]*[A-Za-z0-9])?$/;
const VALUE = /^([A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?)?$/;
const INTEGER = /^-?\d+$/;

/** Parses a condition; throws a FieldError naming `field` and what is wrong. Empty text: no requirement. */
export function parseCondition(text: string, field: string): Requirement[] {
  const out: Requirement[] = [];
  for (const part of splitTopLevel(text, field)) {
    const r = parseRequirement(part.trim(), field);
    out.push(r);
  }
  return out;
}

/** Commas separate requirements, except inside `( … )` value sets. */
function splitTopLevel(text: string, field: string): string[] {
  if (text.trim() === '') return [];
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '(') depth++;
    else if (c === ')') {
      depth--;
      if (depth < 0) throw new FieldError(field, `unbalanced ")" in ${JSON.stringify(text)}`);
    } else if (c === ',' && depth === 0) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  if (depth !== 0) throw new FieldError(field, `unclosed "(" in ${JSON.stringify(text)}`);
  parts.push(text.slice(start));
  return parts;
}

function parseRequirement(text: string, field: string): Requirement {
  const bad = (why: string): never => {
    throw new FieldError(field, `${JSON.stringify(text)}: ${why}`);
  };
  if (text === '') bad('an empty requirement (two commas, or a comma at an end)');
  if (text.startsWith('!')) {
    const key = text.slice(1).trim();
    if (!KEY.test(key)) bad('"!" must be followed by a path');
    return { key, operator: '!', values: [] };
  }
  const set = /^(\S+)\s+(in|notin)\s*\((.*)\)$/.exec(text);
  if (set) {
    const values = set[3]!.split(',').map((v) => v.trim());
    for (const v of values) if (!VALUE.test(v)) bad(`${JSON.stringify(v)} is not a valid value (letters, digits, "-", "_", ".")`);
    return checkKey({ key: set[1]!, operator: set[2] as Operator, values }, bad);
  }
  const op = /^([^\s=!<>]+)\s*(==|=|!=|>|<)\s*(.*)$/.exec(text);
  if (op) {
    const operator = op[2] as Operator;
    const value = op[3]!.trim();
    if (!VALUE.test(value)) bad(`${JSON.stringify(value)} is not a valid value (letters, digits, "-", "_", ".")`);
    if ((operator === '>' || operator === '<') && !INTEGER.test(value)) bad(`"${operator}" needs an integer, not ${JSON.stringify(value)}`);
    return checkKey({ key: op[1]!, operator, values: [value] }, bad);
  }
  if (/\s/.test(text) || /[=<>!()]/.test(text))
    bad('expected "path", "!path", "path <op> value" (=, ==, !=, >, <) or "path in|notin (a, b)"');
  return checkKey({ key: text, operator: 'exists', values: [] }, bad);
}

function checkKey(r: Requirement, bad: (why: string) => never): Requirement {
  if (!KEY.test(r.key)) bad(`${JSON.stringify(r.key)} is not a path (letters, digits, ".", "-", "_", "/")`);
  return r;
}

/** The value at a dotted path, as the peer's lookup gives it; undefined when the path does not exist. */
export function valueAtPath(object: unknown, path: string): string | undefined {
  let cur: unknown = object;
  for (const step of path.split('.')) {
    if (Array.isArray(cur)) {
      if (!/^\d+$/.test(step)) return undefined;
      cur = cur[Number(step)];
    } else if (cur !== null && typeof cur === 'object') {
      if (!Object.prototype.hasOwnProperty.call(cur, step)) return undefined;
      cur = (cur as Record<string, unknown>)[step];
    } else {
      return undefined;
    }
    if (cur === undefined) return undefined;
  }
  if (cur === null) return '';
  if (typeof cur === 'string') return cur;
  if (typeof cur === 'number' || typeof cur === 'boolean') return String(cur);
  return JSON.stringify(cur);
}

export function requirementHolds(r: Requirement, object: unknown): boolean {
  const v = valueAtPath(object, r.key);
  switch (r.operator) {
    case '=':
    case '==':
    case 'in':
      return v !== undefined && r.values.includes(v);
    case '!=':
    case 'notin':
      return v === undefined || !r.values.includes(v);
    case 'exists':
      return v !== undefined;
    case '!':
      return v === undefined;
    case '>':
    case '<': {
      if (v === undefined || !INTEGER.test(v)) return false;
      const have = Number(v);
      const want = Number(r.values[0]);
      return r.operator === '>' ? have > want : have < want;
    }
  }
}

/** Every requirement holds (a success condition). */
export function allHold(rs: readonly Requirement[], object: unknown): boolean {
  return rs.every((r) => requirementHolds(r, object));
}

/** The first requirement that holds (a failure condition), for the message. */
export function firstHolding(rs: readonly Requirement[], object: unknown): Requirement | undefined {
  return rs.find((r) => requirementHolds(r, object));
}

export function requirementText(r: Requirement): string {
  if (r.operator === 'exists') return r.key;
  if (r.operator === '!') return `!${r.key}`;
  if (r.operator === 'in' || r.operator === 'notin') return `${r.key} ${r.operator} (${r.values.join(', ')})`;
  return `${r.key} ${r.operator} ${r.values[0]}`;
}
