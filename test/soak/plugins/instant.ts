/**
 * Soak plugin "soak-instant": answers at once. `plugin: {soak-instant: {echo: "x"}}` succeeds
 * with the output parameter `echo`; `{fail: true}` fails by design (the soak expects Failed).
 *
 * Run by the local pod runner as an agent sidecar: PLUGIN_PORT picks the port.
 */
import { pathToFileURL } from 'node:url';
import { failed, outputParameters, servePlugin, succeeded } from '../../../src/sdk/index.js';
import { runAsSidecar } from './sidecar.js';

export interface InstantConfig {
  echo?: string;
  fail?: boolean;
}

export const INSTANT = 'soak-instant';

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await runAsSidecar(INSTANT, (port) =>
    servePlugin<InstantConfig | null>({
      name: INSTANT,
      port,
      execute: (config) =>
        config?.fail
          ? failed('failed on purpose (soak design)')
          : succeeded('done', { outputs: outputParameters({ echo: config?.echo ?? '' }) }),
    }),
  );
}
