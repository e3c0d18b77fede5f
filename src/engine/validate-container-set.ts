/**
 * Validation of containerSet templates (run as one pod, src/pods/container-set.ts): names,
 * images and commands of the containers, dependencies that name containers of the set without a
 * cycle, the inner retryStrategy, and that outputs and input artifacts — which only the
 * container named `main` reads and writes, as in the peer — have a `main` to go to.
 */
import { intOrStringToNumber, parseGoDuration, type Template } from '../api/index.js';
import { INIT_CONTAINER, WAIT_CONTAINER } from '../api/index.js';
import { detailOf, tagged, type TemplateContext } from './validate-template.js';

const NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

export function validateContainerSet(t: Template, where: string, ctx: TemplateContext): void {
  const set = t.containerSet!;
  const at = `${where}.containerSet`;
  const containers = Array.isArray(set.containers) ? set.containers : [];
  if (containers.length === 0) {
    ctx.add(`${at}.containers`, 'needs at least one container');
    return;
  }
  const names = new Set<string>();
  containers.forEach((c, i) => {
    const f = `${at}.containers[${i}]`;
    if (typeof c.name !== 'string' || !NAME.test(c.name) || c.name.length > 63) {
      ctx.add(`${f}.name`, `${JSON.stringify(c.name)} is not a container name (lower case letters, digits and '-', at most 63)`);
    } else if (c.name === INIT_CONTAINER || c.name === WAIT_CONTAINER) {
      ctx.add(`${f}.name`, `"${c.name}" is reserved by plugflow for its own container in the pod`);
    } else if (names.has(c.name)) {
      ctx.add(`${f}.name`, `"${c.name}" is used twice`);
    }
    names.add(c.name ?? '');
    if (!c.image) ctx.add(`${f}.image`, 'is required');
  });
  const deps = new Map<string, string[]>();
  containers.forEach((c, i) => {
    const list = c.dependencies ?? [];
    list.forEach((d, j) => {
      if (d === c.name) ctx.add(`${at}.containers[${i}].dependencies[${j}]`, 'a container cannot depend on itself');
      else if (!names.has(d)) ctx.add(`${at}.containers[${i}].dependencies[${j}]`, `names no container of the set: ${JSON.stringify(d)}`);
    });
    deps.set(c.name ?? '', list);
  });
  const cycle = findCycle(deps);
  if (cycle) ctx.add(`${at}.containers`, `have a dependency cycle: ${cycle.join(' -> ')}`);
  const r = set.retryStrategy;
  if (r) {
    if (r.retries === undefined) ctx.add(`${at}.retryStrategy.retries`, 'is required');
    else if (!tagged(r.retries)) {
      try {
        const n = intOrStringToNumber(r.retries, `${at}.retryStrategy.retries`);
        if (!Number.isInteger(n) || n < 0) ctx.add(`${at}.retryStrategy.retries`, `must be a whole number of at least 0, got ${n}`);
      } catch (err) {
        ctx.add(`${at}.retryStrategy.retries`, detailOf(err, `${at}.retryStrategy.retries`));
      }
    }
    if (r.duration !== undefined && !tagged(r.duration)) {
      try {
        parseGoDuration(r.duration, { field: `${at}.retryStrategy.duration` });
      } catch (err) {
        ctx.add(`${at}.retryStrategy.duration`, detailOf(err, `${at}.retryStrategy.duration`));
      }
    }
  }
  if (!names.has('main')) {
    const why = 'needs a container named main in the containerSet: only main reads inputs and writes outputs (as in the peer)';
    (t.outputs?.parameters ?? []).forEach((p, i) => {
      if (p.valueFrom?.path !== undefined) ctx.add(`${where}.outputs.parameters[${i}].valueFrom.path`, why);
    });
    if (t.outputs?.artifacts?.length) ctx.add(`${where}.outputs.artifacts`, why);
    if (t.inputs?.artifacts?.length) ctx.add(`${where}.inputs.artifacts`, why);
    if (t.archiveLocation?.archiveLogs === true) ctx.add(`${where}.archiveLocation.archiveLogs`, why);
  }
}

/** A dependency cycle as a path of names (first name repeated at the end), or undefined. */
function findCycle(deps: Map<string, string[]>): string[] | undefined {
  const state = new Map<string, 'visiting' | 'done'>();
  const path: string[] = [];
  const visit = (n: string): string[] | undefined => {
    if (state.get(n) === 'done') return undefined;
    if (state.get(n) === 'visiting') return [...path.slice(path.indexOf(n)), n];
    state.set(n, 'visiting');
    path.push(n);
    for (const d of deps.get(n) ?? []) {
      if (!deps.has(d) || d === n) continue;
      const c = visit(d);
      if (c) return c;
    }
    path.pop();
    state.set(n, 'done');
    return undefined;
  };
  for (const n of deps.keys()) {
    const c = visit(n);
    if (c) return c;
  }
  return undefined;
}
