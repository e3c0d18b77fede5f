/**
 * `/metrics` on a port of its own (`--metrics-port`, plain HTTP). The metrics name namespaces
 * and bindings, so they are not served on the API port that callers reach; the metrics port is
 * for the cluster's scraper (the pod's prometheus.io annotations and the plugflow-server-metrics
 * Service in manifests/base/server.yaml), and a NetworkPolicy can keep everyone else off it.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { applyLimits, connectionsCheckingInterval, firstRequest, LIMIT_DEFAULTS } from './limits.js';
import type { ServerMetrics } from './metrics.js';

export interface MetricsServer {
  /** e.g. `http://127.0.0.1:9091/metrics`. */
  url: string;
  port: number;
  close(): Promise<void>;
}

export async function startMetricsServer(metrics: ServerMetrics, host: string, port: number): Promise<MetricsServer> {
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    firstRequest(req);
    req.resume();
    const path = (req.url ?? '').split('?')[0];
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res
        .writeHead(404, { 'content-type': 'text/plain; charset=utf-8', connection: 'close' })
        .end('only GET /metrics is served on this port\n');
      return;
    }
    metrics.registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': metrics.registry.contentType }).end(req.method === 'HEAD' ? undefined : text),
      (err: Error) => res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end(`metrics failed: ${err.message}\n`),
    );
  };
  // Scrapers are few: a small connection cap and the same timeouts as the API port.
  const limits = { ...LIMIT_DEFAULTS, maxConnections: 64 };
  const server = createServer({ connectionsCheckingInterval: connectionsCheckingInterval(limits) }, handle);
  applyLimits(server, limits);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const bound = (server.address() as AddressInfo).port;
  const shown = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  return {
    url: `http://${shown.includes(':') ? `[${shown}]` : shown}:${bound}/metrics`,
    port: bound,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
