/**
 * The CI version of the fuzz: FUZZ_CI_PER inputs per target (default 25), seed fixed, against
 * the whole system (own control plane). No crash, no hang, every rejection names its problem,
 * every canary accepted before the hostile input comes through. `make fuzz` runs a longer one.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { parseSeed } from '../soak/prng.js';
import { fuzzText, runFuzz } from './run-fuzz.js';

const per = Number(process.env.FUZZ_CI_PER ?? 25);

it(
  `fuzz with ${per} inputs per target: nothing crashes, every rejection is named, nothing accepted is lost`,
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'plugflow-fuzz-'));
    const report = await runFuzz({
      seed: parseSeed(process.env.FUZZ_SEED, 7),
      per,
      dir,
      say: (line) => console.log(`[fuzz] ${line}`),
    });
    console.log(fuzzText(report));
    expect(report.targets.every((t) => t.tried > 0)).toBe(true);
    expect(report.targets.flatMap((t) => t.failures.map((f) => `${t.target}: ${f}`))).toEqual([]);
    rmSync(dir, { recursive: true, force: true }); // kept (with every log) when the test fails
  },
  15 * 60_000,
);
