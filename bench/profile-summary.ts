/**
 * Where a Node.js CPU profile (`node --cpu-prof`) spent its time: self time by function and by
 * file (own code vs each package vs Node's internals and the garbage collector), so that the
 * reconcile path's cost can be read without a profiler UI. Used with `PEER_CPU_PROF=DIR make
 * bench-peer` (bench/peer-bench.ts) on the controller.
 *
 *   npx tsx bench/profile-summary.ts FILE.cpuprofile [...]   (TOP=30 rows per table)
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Where a script URL belongs: our dist/ file, a package, or Node/V8 itself. */
export function ownerOf(url: string): string {
  if (!url) return '(native / V8)';
  if (url.startsWith('node:')) return 'node: built-ins';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1]!;
  const dist = /\/dist\/(.+)$/.exec(url);
  return dist ? `dist/${dist[1]}` : url.replace(/^file:\/\//, '');
}

export function summarise(profile: Profile): { total: number; byFunction: Map<string, number>; byOwner: Map<string, number> } {
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const byFunction = new Map<string, number>();
  const byOwner = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i] ?? 0;
    const n = nodes.get(id);
    if (!n) return;
    total += dt;
    const f = n.callFrame;
    if (f.functionName === '(idle)' || f.functionName === '(program)') return;
    const owner = f.functionName === '(garbage collector)' ? '(garbage collector)' : ownerOf(f.url);
    const fn = `${f.functionName || '(anonymous)'} ${owner}:${f.lineNumber + 1}`;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + dt);
    byOwner.set(owner, (byOwner.get(owner) ?? 0) + dt);
  });
  return { total, byFunction, byOwner };
}

function table(title: string, m: Map<string, number>, busy: number, top: number): string {
  const rows = [...m].sort((a, b) => b[1] - a[1]).slice(0, top);
  return [
    `\n${title}`,
    ...rows.map(([k, us]) => `${(us / 1000).toFixed(0).padStart(7)} ms ${((100 * us) / busy).toFixed(1).padStart(5)} %  ${k}`),
  ].join('\n');
}

if (process.argv[1]?.endsWith('profile-summary.ts')) {
  const top = Number(process.env.TOP ?? 30);
  for (const file of process.argv.slice(2)) {
    const s = summarise(JSON.parse(readFileSync(file, 'utf8')) as Profile);
    const busy = [...s.byOwner.values()].reduce((a, b) => a + b, 0);
    console.log(`== ${file}: ${(s.total / 1e6).toFixed(1)} s profiled, ${(busy / 1e6).toFixed(2)} s busy (not idle)`);
    console.log(table('self time by owner', s.byOwner, busy, top));
    console.log(table('self time by function', s.byFunction, busy, top));
  }
}
