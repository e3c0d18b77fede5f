/**
 * `make soak`: the long soak with chaos (about 10 minutes in all: 9 minutes of workload, then
 * start-up and settling), then its figures into bench/RESULTS.md (section "Soak with chaos").
 * Environment:
 *
 *   SOAK_SECONDS=540   workload duration          SOAK_SEED=20261122   the seed
 *   SOAK_CHAOS=1       0 runs the same mix without chaos
 *   SOAK_EVENTS=embedded   jetstream: the server stores events in a three-node JetStream bus
 *                      (chaos then SIGKILLs one of its nodes too)
 *   SOAK_DIR=…         working directory (default .plugflow/soak-<time>; logs stay there)
 *   SOAK_WRITE=1       0 leaves bench/RESULTS.md alone
 *
 * Exits 1 when an invariant is violated.
 */
import { join } from 'node:path';
import { machineDescription, updateResultsSection } from '../bench/run-all.js';
import { REPO_ROOT } from '../src/runner/shim.js';
import { parseSeed } from '../test/soak/prng.js';
import { stopAllSystems } from '../test/soak/system.js';
import { markdownReport, textReport } from '../test/soak/report.js';
import { runSoak } from '../test/soak/run-soak.js';

export const DEFAULT_SOAK_SEED = 20261122;

const seconds = Number(process.env.SOAK_SECONDS ?? 540);
if (!Number.isFinite(seconds) || seconds < 10 || seconds > 3600)
  throw new Error(`SOAK_SECONDS must be between 10 and 3600, got ${process.env.SOAK_SECONDS}`);
const chaos = process.env.SOAK_CHAOS !== '0';
const events = process.env.SOAK_EVENTS ?? 'embedded';
if (events !== 'embedded' && events !== 'jetstream') throw new Error(`SOAK_EVENTS must be embedded or jetstream, got ${events}`);
const seed = parseSeed(process.env.SOAK_SEED, DEFAULT_SOAK_SEED);
const dir = process.env.SOAK_DIR ?? join(REPO_ROOT, '.plugflow', `soak-${Date.now()}`);
// Ctrl-C stops the control plane and the components this run started, then exits.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    console.log(`${signal}: stopping the system…`);
    void stopAllSystems().finally(() => process.exit(130));
  });
}
const t0 = Date.now();
const report = await runSoak({
  seed,
  durationMs: seconds * 1000,
  chaos,
  dir,
  eventBus: events === 'jetstream',
  sampleEveryMs: 5000,
  say: (line) => console.log(`[soak ${((Date.now() - t0) / 1000).toFixed(0)}s] ${line}`),
});
console.log(`\n${textReport(report)}`);
if (process.env.SOAK_WRITE !== '0') {
  updateResultsSection(
    `${chaos ? 'soak-chaos' : 'soak'}${events === 'jetstream' ? '-jetstream' : ''}`,
    `${chaos ? 'Soak with chaos' : 'Soak'} (\`make soak\`, ${seconds} s, events: ${events === 'jetstream' ? 'JetStream bus' : 'embedded'})`,
    markdownReport(report, machineDescription()),
  );
  console.log('figures written to bench/RESULTS.md');
}
process.exit(report.result.violations.length ? 1 : 0);
