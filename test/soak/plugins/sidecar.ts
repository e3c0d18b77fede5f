/**
 * What the three soak plugins share as processes: the port from PLUGIN_PORT, a line on stdout
 * once listening (the sidecar's log), and a graceful stop on SIGTERM, as the runner sends it
 * when the agent pod is deleted.
 */
import type { RunningPlugin } from '../../../src/sdk/index.js';

export async function runAsSidecar(name: string, start: (port: number) => Promise<RunningPlugin>): Promise<void> {
  const port = Number(process.env.PLUGIN_PORT);
  if (!Number.isInteger(port) || port <= 0)
    throw new Error(`${name}: PLUGIN_PORT must be a port number, got ${JSON.stringify(process.env.PLUGIN_PORT)}`);
  const plugin = await start(port);
  console.log(`${name} plugin listening on ${plugin.url} (pid ${process.pid})`);
  process.once('SIGTERM', () => void plugin.close().then(() => process.exit(0)));
}
