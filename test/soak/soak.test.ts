/**
 * The CI version of the soak: the whole system (own control plane; controller and server as
 * child processes) under the steady mix with chaos — every kind of kill at least once — for
 * SOAK_CI_SECONDS (default 75), seed fixed; every invariant must hold, among them that no
 * accepted event is lost. It runs twice: the embedded default (sync dispatch), and with a
 * three-node JetStream event bus, one of whose nodes is killed too. `make soak` runs the
 * ten-minute version (hack/soak.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { parseSeed } from './prng.js';
import { textReport } from './report.js';
import { runSoak } from './run-soak.js';

const seconds = Number(process.env.SOAK_CI_SECONDS ?? 75);

it.each([
  { events: 'embedded', eventBus: false },
  { events: 'jetstream', eventBus: true },
])(
  `soak with chaos for ${seconds} s keeps every invariant (events: $events)`,
  async ({ eventBus }) => {
    const dir = mkdtempSync(join(tmpdir(), 'plugflow-soak-'));
    const report = await runSoak({
      seed: parseSeed(process.env.SOAK_SEED, 20261122),
      durationMs: seconds * 1000,
      chaos: true,
      dir,
      sampleEveryMs: 5000,
      settleMs: 180_000,
      eventBus,
      say: (line) => console.log(`[soak] ${line}`),
    });
    console.log(textReport(report));
    expect(
      report.chaosDone
        .filter((c) => !c.skipped)
        .map((c) => c.kind)
        .sort(),
    ).toEqual(
      [
        'agent-delete',
        'apiserver-restart',
        ...(eventBus ? ['bus-node-kill'] : []),
        'controller-kill',
        'server-kill',
        'server-term',
        'sidecar-kill',
      ].sort(),
    );
    expect(report.result.events.lost).toBe(0);
    expect(report.result.violations).toEqual([]);
    rmSync(dir, { recursive: true, force: true }); // kept (with every log) when the test fails
  },
  15 * 60_000,
);
