/**
 * A stand-in for the Kubernetes API server on a real local socket (node:http on 127.0.0.1:0),
 * with a real KubeClient pointed at it: unit tests of the client and of the shells' HTTP-facing
 * decisions go through the same transport, headers and error parsing as production, in
 * milliseconds. The test's handler decides each reply. Test support, kept out of dist/.
 */
import { KubeConfig } from '@kubernetes/client-node';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeClient, type KubeClientOptions } from '../client.js';

/** The token of the client's own identity (its kubeconfig user). */
export const OWN_TOKEN = 'own-token';

export interface StandInRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  /** The bearer token of the Authorization header, if any. */
  token?: string;
  /** The parsed JSON body, if any. */
  body: unknown;
}

/** A JSON reply (status 200 unless given), a raw text reply, or the connection cut without a reply. */
export type StandInReply = { status?: number; body?: unknown; text?: string; contentType?: string } | 'hang-up';

export interface ApiStandIn {
  client: KubeClient;
  /** The kubeconfig the client was made from (cluster = the stand-in, user token OWN_TOKEN). */
  kubeConfig: KubeConfig;
  url: string;
  /** Every request received, in order. */
  requests: StandInRequest[];
  close(): Promise<void>;
}

/** A Status reply as the API server sends it for a refusal. */
export function statusReply(code: number, reason: string, message: string): StandInReply {
  return { status: code, body: { apiVersion: 'v1', kind: 'Status', status: 'Failure', code, reason, message } };
}

export async function startApiStandIn(
  handle: (req: StandInRequest, res: ServerResponse) => StandInReply | undefined | Promise<StandInReply | undefined>,
  opts: KubeClientOptions = {},
): Promise<ApiStandIn> {
  const requests: StandInRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const url = new URL(req.url ?? '/', 'http://stand-in');
        const text = Buffer.concat(chunks).toString('utf8');
        const auth = req.headers.authorization;
        const r: StandInRequest = {
          method: req.method ?? 'GET',
          path: url.pathname,
          query: url.searchParams,
          headers: req.headers,
          token: auth?.startsWith('Bearer ') ? auth.slice(7) : undefined,
          body: text ? (JSON.parse(text) as unknown) : undefined,
        };
        requests.push(r);
        let reply: StandInReply | undefined;
        try {
          reply = await handle(r, res);
        } catch (err) {
          reply = { status: 500, text: String(err) };
        }
        // undefined: the handler answered on `res` itself (streams).
        if (reply === undefined) return;
        if (reply === 'hang-up') {
          req.socket.destroy();
          return;
        }
        const body = reply.text ?? JSON.stringify(reply.body ?? {});
        res.writeHead(reply.status ?? 200, { 'content-type': reply.contentType ?? 'application/json' });
        res.end(body);
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'stand-in', server: url, skipTLSVerify: true }],
    users: [{ name: 'own', token: OWN_TOKEN }],
    contexts: [{ name: 'stand-in', cluster: 'stand-in', user: 'own' }],
    currentContext: 'stand-in',
  });
  const client = await KubeClient.fromKubeConfig(kc, { timeoutMs: 2_000, ...opts });
  return {
    client,
    kubeConfig: kc,
    url,
    requests,
    close: async () => {
      await client.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
