// Loaded first by bin/plugflow.js. In a container plugflow is often PID 1, and PID 1 ignores
// SIGTERM and SIGINT until it has a handler: a pod deleted while the CLI still loads (seconds
// under load) would run on for its whole grace period; an agent pod then called its already
// stopped plugin sidecars and reported their failures. Until the command installs its own
// handler, a signal ends the process with 128+N, as it ends any process that is not PID 1.
import { constants } from 'node:os';

const SIGNALS = ['SIGTERM', 'SIGINT'];
const early = (sig) => process.exit(128 + (constants.signals[sig] ?? 15));
for (const sig of SIGNALS) process.on(sig, early);
process.on('newListener', (event, listener) => {
  // Removed only once the new listener is in place: removing the last one first would make
  // node stop catching the signal altogether.
  if (SIGNALS.includes(event) && listener !== early) queueMicrotask(() => process.off(event, early));
});
