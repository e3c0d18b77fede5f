/**
 * `make fuzz`: the fuzz run (bounded: FUZZ_PER inputs per target, default 300), per-target counts
 * printed and written to bench/RESULTS.md (section "Fuzz"). FUZZ_SEED picks the seed,
 * FUZZ_WRITE=0 leaves RESULTS.md alone, FUZZ_DIR the working directory. Exits 1 on any failure.
 */
import { join } from 'node:path';
import { machineDescription, updateResultsSection } from '../bench/run-all.js';
import { REPO_ROOT } from '../src/runner/shim.js';
import { fuzzMarkdown, fuzzText, runFuzz } from '../test/fuzz/run-fuzz.js';
import { parseSeed } from '../test/soak/prng.js';
import { stopAllSystems } from '../test/soak/system.js';

const per = Number(process.env.FUZZ_PER ?? 300);
if (!Number.isInteger(per) || per < 1 || per > 5000)
  throw new Error(`FUZZ_PER must be a whole number from 1 to 5000, got ${process.env.FUZZ_PER}`);
const seed = parseSeed(process.env.FUZZ_SEED, 7);
// Ctrl-C stops the control plane and the components this run started, then exits.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    console.log(`${signal}: stopping the system…`);
    void stopAllSystems().finally(() => process.exit(130));
  });
}
const t0 = Date.now();
const report = await runFuzz({
  seed,
  per,
  dir: process.env.FUZZ_DIR ?? join(REPO_ROOT, '.plugflow', `fuzz-${Date.now()}`),
  say: (l) => console.log(`[fuzz ${((Date.now() - t0) / 1000).toFixed(0)}s] ${l}`),
});
console.log(`\n${fuzzText(report)}`);
if (process.env.FUZZ_WRITE !== '0') {
  updateResultsSection('fuzz', `Fuzz (\`make fuzz\`, ${per} inputs per target)`, fuzzMarkdown(report, machineDescription()));
  console.log('figures written to bench/RESULTS.md');
}
process.exit(report.failures ? 1 : 0);
