/**
 * Soak plugin "soak-flaky": a plugin with a bad network. For each task (workflow uid + template
 * name) the first call is answered 503 and the second has its connection dropped before any
 * reply; the third is served (Succeeded, output `attempts`). Both failures are transient by the
 * contract, so the agent must retry through them (5 attempts) and the task must succeed.
 *
 * The decision needs the task, which is in the body, so the body is read here and handed to the
 * SDK's handler as a replayed stream.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { outputParameters, pluginRequestHandler, succeeded } from '../../../src/sdk/index.js';
import { runAsSidecar } from './sidecar.js';

export const FLAKY = 'soak-flaky';

/** What the n-th call of one task gets (1-based). */
export function flakyAnswer(call: number): 'unavailable' | 'drop' | 'serve' {
  return call === 1 ? 'unavailable' : call === 2 ? 'drop' : 'serve';
}

function taskKey(body: Buffer): string {
  try {
    const args = JSON.parse(body.toString('utf8')) as { workflow?: { metadata?: { uid?: string } }; template?: { name?: string } };
    return `${args.workflow?.metadata?.uid ?? ''}/${args.template?.name ?? ''}`;
  } catch {
    return '';
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const calls = new Map<string, number>();
  const sdk = pluginRequestHandler({
    name: FLAKY,
    execute: (_config: unknown, ctx) =>
      succeeded('served after a 503 and a dropped connection', {
        outputs: outputParameters({ attempts: String(calls.get(`${ctx.workflow.uid}/${ctx.template.name}`) ?? 0) }),
      }),
  });
  await runAsSidecar(FLAKY, async (port) => {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        const key = taskKey(body);
        const n = (calls.get(key) ?? 0) + 1;
        calls.set(key, n);
        const answer = flakyAnswer(n);
        if (answer === 'unavailable') {
          res.writeHead(503, { 'content-type': 'application/json' });
          res.end('{"message":"flaky: try again"}');
        } else if (answer === 'drop') {
          req.socket.destroy();
        } else {
          const replay = Object.assign(Readable.from([body]), {
            method: req.method,
            url: req.url,
            headers: req.headers,
            socket: req.socket,
          });
          sdk(replay as unknown as IncomingMessage, res);
        }
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '0.0.0.0', () => resolve());
    });
    const actual = (server.address() as AddressInfo).port;
    return {
      server,
      port: actual,
      url: `http://127.0.0.1:${actual}`,
      close: () => new Promise<void>((resolve) => (server.close(() => resolve()), server.closeAllConnections())),
    };
  });
}
