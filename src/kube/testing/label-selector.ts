/** Label selectors as the API server reads them, for the in-memory client (fake-kube-client.ts). */

/**
 * Label selectors: `k`, `!k`, `k=v`, `k==v`, `k!=v`, and the set-based `k in (a,b)` and
 * `k notin (a,b)`, comma-separated (and).
 */
export function matchesLabels(labels: Record<string, string>, selector: string): boolean {
  // Commas inside a set's parentheses do not separate terms.
  const terms = selector.match(/[^,(]+(\([^)]*\))?/g) ?? [];
  for (const raw of terms) {
    const term = raw.trim();
    if (!term) continue;
    const set = /^(\S+)\s+(in|notin)\s+\(([^)]*)\)$/.exec(term);
    if (set) {
      const values = set[3]!.split(',').map((v) => v.trim());
      const has = set[1]! in labels && values.includes(labels[set[1]!]!);
      if (set[2] === 'in' ? !has : has) return false;
      continue;
    }
    const ne = term.indexOf('!=');
    if (ne > 0) {
      if (labels[term.slice(0, ne)] === term.slice(ne + 2)) return false;
      continue;
    }
    const eq = term.indexOf('=');
    if (eq > 0) {
      if (labels[term.slice(0, eq)] !== term.slice(term[eq + 1] === '=' ? eq + 2 : eq + 1)) return false;
      continue;
    }
    if (term.startsWith('!') ? term.slice(1) in labels : !(term in labels)) return false;
  }
  return true;
}
