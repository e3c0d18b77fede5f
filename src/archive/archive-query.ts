/**
 * What a caller asks of the archive, checked and turned into SQL: the namespace(s) it may read,
 * phases, a label selector (the Kubernetes equality forms and existence: `a=b`, `a==b`, `a!=b`,
 * `a`, `!a`, `a in (x,y)`, `a notin (x,y)`), a page size and a cursor. Pure, so the whole of it
 * is unit-tested; every value reaches the database as a parameter, never inside the SQL text.
 */
export interface ArchiveFilter {
  /** Namespaces to read; undefined: every namespace (the caller may list workflows cluster-wide). */
  namespaces?: readonly string[];
  phases?: readonly string[];
  labelSelector?: string;
  /** Exact name (within the namespaces). */
  name?: string;
}

export interface PageRequest {
  limit: number;
  /** From a previous page's `continue`. */
  cursor?: string;
}

export class ArchiveQueryError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ArchiveQueryError';
  }
}

export const PHASES = ['Succeeded', 'Failed', 'Error'] as const;
export const MAX_PAGE = 500;

type Requirement = { key: string; op: 'in' | 'notin'; values: string[] } | { key: string; op: 'exists' | '!exists' };

const LABEL_KEY = /^([a-z0-9]([-a-z0-9.]*[a-z0-9])?\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const LABEL_VALUE = /^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$/;

/**
 * Bounds on a selector: each requirement is a subquery, each value a parameter, so a selector of
 * thousands of terms (the peer's UI never sends more than a handful) would cost the database what
 * a caller chose. Beyond them the list is refused, naming the bound.
 */
export const SELECTOR_LIMITS = { chars: 4096, requirements: 20, values: 100 } as const;

/** Parses a label selector of the forms the archive answers; anything else is refused, naming it. */
export function parseLabelSelector(selector: string): Requirement[] {
  if (selector.length > SELECTOR_LIMITS.chars)
    throw new ArchiveQueryError(`labelSelector: ${selector.length} characters; at most ${SELECTOR_LIMITS.chars} are answered`);
  const out: Requirement[] = [];
  let values = 0;
  const count = (r: Requirement) => {
    if (out.length >= SELECTOR_LIMITS.requirements)
      throw new ArchiveQueryError(`labelSelector: more than ${SELECTOR_LIMITS.requirements} requirements; narrow it`);
    values += 'values' in r ? r.values.length : 0;
    if (values > SELECTOR_LIMITS.values)
      throw new ArchiveQueryError(`labelSelector: more than ${SELECTOR_LIMITS.values} values in all; narrow it`);
    out.push(r);
  };
  for (const raw of splitTop(selector)) {
    const part = raw.trim();
    if (part === '') continue;
    let m: RegExpExecArray | null;
    if ((m = /^(\S+?)\s+(in|notin)\s+\(([^)]*)\)$/.exec(part))) {
      const listed = m[3]!
        .split(',')
        .map((v) => v.trim())
        .filter((v) => v !== '');
      count({ key: key(m[1]!), op: m[2] as 'in' | 'notin', values: listed.map(value) });
    } else if ((m = /^([^=!\s]+)\s*(==|=|!=)\s*(\S*)$/.exec(part))) {
      count({ key: key(m[1]!), op: m[2] === '!=' ? 'notin' : 'in', values: [value(m[3]!)] });
    } else if ((m = /^!\s*(\S+)$/.exec(part))) count({ key: key(m[1]!), op: '!exists' });
    else if (/^\S+$/.test(part)) count({ key: key(part), op: 'exists' });
    else
      throw new ArchiveQueryError(`labelSelector: "${part}" is not a requirement (use key=value, key!=value, key in (a,b), key or !key)`);
  }
  return out;
}

function key(k: string): string {
  if (!LABEL_KEY.test(k) || k.length > 317) throw new ArchiveQueryError(`labelSelector: "${k}" is not a label key`);
  return k;
}
function value(v: string): string {
  if (!LABEL_VALUE.test(v) || v.length > 63) throw new ArchiveQueryError(`labelSelector: "${v}" is not a label value`);
  return v;
}

/** Splits on commas outside parentheses. */
function splitTop(s: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of s) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      parts.push(cur);
      cur = '';
    } else cur += ch;
  }
  parts.push(cur);
  return parts;
}

export interface Cursor {
  /** finished_at, ISO. */
  t: string;
  uid: string;
}

export function encodeCursor(c: Cursor): string {
  return Buffer.from(JSON.stringify([c.t, c.uid])).toString('base64url');
}

export function decodeCursor(s: string): Cursor {
  try {
    const [t, uid] = JSON.parse(Buffer.from(s, 'base64url').toString('utf8')) as unknown[];
    if (typeof t === 'string' && !Number.isNaN(Date.parse(t)) && typeof uid === 'string' && /^[0-9a-f-]{36}$/.test(uid)) return { t, uid };
  } catch {
    // fall through
  }
  throw new ArchiveQueryError('continue: not a cursor this archive gave out');
}

/** The WHERE clause (without the keyword) and its parameters, numbered from `$1`. */
export function whereClause(f: ArchiveFilter, params: unknown[] = []): { sql: string; params: unknown[] } {
  const conds: string[] = [];
  const p = (v: unknown) => {
    params.push(v);
    return `$${params.length}`;
  };
  if (f.namespaces !== undefined)
    conds.push(f.namespaces.length === 1 ? `w.namespace = ${p(f.namespaces[0])}` : `w.namespace = any(${p([...f.namespaces])})`);
  if (f.name !== undefined) conds.push(`w.name = ${p(f.name)}`);
  if (f.phases && f.phases.length > 0) {
    for (const ph of f.phases)
      if (!(PHASES as readonly string[]).includes(ph))
        throw new ArchiveQueryError(`phase: "${ph}" is not a phase of a finished workflow (${PHASES.join(', ')})`);
    conds.push(f.phases.length === 1 ? `w.phase = ${p(f.phases[0])}` : `w.phase = any(${p([...f.phases])})`);
  }
  for (const r of parseLabelSelector(f.labelSelector ?? '')) {
    const keyParam = p(r.key);
    const has = (extra: string) => `exists (select 1 from archived_workflow_labels l where l.uid = w.uid and l.key = ${keyParam}${extra})`;
    if (!('values' in r)) conds.push(r.op === 'exists' ? has('') : `not ${has('')}`);
    else {
      const match = has(` and l.value = any(${p(r.values)})`);
      conds.push(r.op === 'in' ? match : `not ${match}`);
    }
  }
  return { sql: conds.length ? conds.join(' and ') : 'true', params };
}

/** One page, newest finished first; `limit + 1` rows are read to know whether there is a next page. */
export function pageQuery(columns: string, f: ArchiveFilter, page: PageRequest): { sql: string; params: unknown[] } {
  if (!Number.isInteger(page.limit) || page.limit < 1 || page.limit > MAX_PAGE)
    throw new ArchiveQueryError(`limit: must be a whole number from 1 to ${MAX_PAGE}`);
  const { sql, params } = whereClause(f);
  let where = sql;
  if (page.cursor) {
    const c = decodeCursor(page.cursor);
    params.push(c.t, c.uid);
    where += ` and (w.finished_at, w.uid) < ($${params.length - 1}::timestamptz, $${params.length}::uuid)`;
  }
  params.push(page.limit + 1);
  return {
    sql: `select ${columns} from archived_workflows w where ${where} order by w.finished_at desc, w.uid desc limit $${params.length}`,
    params,
  };
}
