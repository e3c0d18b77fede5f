/**
 * Synchronization locks as a controller feature: the lock table (synchronizer.ts) is observed
 * for the engine (src/engine/synchronization.ts decides what a workflow needs), a waiter served
 * now runs the engine again at once, and what the stored status holds is settled into the table.
 */
import { grantsSeen, type Synchronizer } from '../synchronizer.js';
import type { WorkflowFeature } from './feature.js';

export function locksFeature(locks: Synchronizer): WorkflowFeature {
  return {
    name: 'locks',
    // After a grant the engine runs again with the claims of the run before (what it asked for).
    observe: (wf, observations, previous) => {
      observations.locks = locks.observe(wf, previous?.locks);
    },
    rerun: (wf, run) => locks.admit(wf, run.locks, run.observations.locks),
    // An ended workflow holds nothing, also what was granted to it after its engine ran.
    stored: ({ workflow, run, final }) => locks.settle(workflow, grantsSeen(run.observations.locks), final ? undefined : run.locks),
    forget: (key) => locks.forget(key),
  };
}
