/**
 * Control plane figures: the cold build (step timings recorded by the last cold run of
 * hack/build-control-plane.sh) and the warm start — etcd + kube-apiserver + controller manager
 * from cached binaries to /readyz — measured here, three times.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ControlPlane, ensureControlPlaneBinaries } from '../src/devenv/control-plane.js';
import { printFigures, type Figure } from './figures.js';

export async function runControlPlaneBench(): Promise<Figure[]> {
  const bin = await ensureControlPlaneBinaries((l) => console.log(l));
  const figures: Figure[] = [];
  const timings = join(bin, 'build-timings.txt');
  if (existsSync(timings)) {
    const rows = readFileSync(timings, 'utf8')
      .trim()
      .split('\n')
      .map((l) => l.split(' '));
    const total = rows.filter(([k]) => k !== 'date').reduce((s, [, v]) => s + Number(v), 0);
    const date = rows.find(([k]) => k === 'date')?.[1] ?? 'unknown';
    figures.push({
      name: 'control plane cold build (etcd + apiserver + controller-manager)',
      value: total,
      unit: 's',
      goal: '< 1800 s (CI budget 5400 s)',
      met: total < 1800,
      note: `recorded ${date}: ${rows
        .filter(([k]) => k !== 'date')
        .map(([k, v]) => `${k} ${v}s`)
        .join(', ')}`,
    });
  } else {
    console.log('no cold-build timings recorded (binaries were built before timings were kept)');
  }
  const starts: number[] = [];
  for (let i = 0; i < 3; i++) {
    const plane = new ControlPlane({ binDir: bin });
    const t0 = performance.now();
    await plane.start();
    starts.push((performance.now() - t0) / 1000);
    await plane.stop();
  }
  const best = Math.min(...starts);
  figures.push({
    name: 'control plane warm start to /readyz (best of 3)',
    value: Number(best.toFixed(2)),
    unit: 's',
    goal: '< 30 s',
    met: best < 30,
    note: `runs: ${starts.map((s) => s.toFixed(2)).join(', ')} s`,
  });
  return figures;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  printFigures('control plane', await runControlPlaneBench());
}
