import { newMap, type Value } from './values.js';

/**
 * Variables reach templates as a flat map (`{"steps.a.outputs.result": "x"}`), the way the
 * engine collects them. `{{name}}` tags look names up in it directly; `{{=…}}` expressions need
 * nested maps (`steps.a.outputs.result`, `inputs.parameters['my-param']`), built here by
 * splitting names on ".". When a name is both a value and a prefix of other names (`item` and
 * `item.a`), the map wins, since that keeps every longer name reachable.
 */
export type FlatVars = Readonly<Record<string, unknown>>;

export function expandVars(vars: FlatVars): Record<string, Value> {
  const root = newMap();
  const names = Object.keys(vars).sort((a, b) => a.length - b.length || (a < b ? -1 : 1));
  for (const name of names) {
    const path = name.split('.');
    let cur: Record<string, Value> = root;
    for (let i = 0; i < path.length - 1; i++) {
      const seg = path[i];
      const next = Object.hasOwn(cur, seg) ? cur[seg] : undefined;
      if (next !== undefined && next !== null && typeof next === 'object' && !Array.isArray(next) && Object.getPrototypeOf(next) === null) {
        cur = next as Record<string, Value>;
      } else {
        // A shorter name held a plain value here: the longer names win (see above).
        const child = newMap();
        cur[seg] = child;
        cur = child;
      }
    }
    const leaf = path[path.length - 1];
    const existing = Object.hasOwn(cur, leaf) ? cur[leaf] : undefined;
    if (existing !== undefined && existing !== null && typeof existing === 'object' && Object.getPrototypeOf(existing) === null) continue;
    const v = vars[name];
    cur[leaf] = v === undefined ? null : (v as Value);
  }
  return root;
}
