/**
 * `/metrics` on a port of its own (`--metrics-port`, plain HTTP). The metrics name namespaces
 * and bindings, so they are not served on the API port that callers reach; the metrics port is
 * for the cluster's scraper (the pod's prometheus.io annotations and the plugflow-server-metrics
 * Service in manifests/base/server.yaml), and a NetworkPolicy can keep everyone else off it.
 */
import { NO_CHECKS, startHealthServer } from '../kube/health-server.js';
import { applyLimits, connectionsCheckingInterval, firstRequest, LIMIT_DEFAULTS } from './limits.js';
import type { ServerMetrics } from './metrics.js';

export interface MetricsServer {
  /** e.g. `http://127.0.0.1:9091/metrics`. */
  url: string;
  port: number;
  close(): Promise<void>;
}

export async function startMetricsServer(metrics: ServerMetrics, host: string, port: number): Promise<MetricsServer> {
  // Scrapers are few: a small connection cap and the same timeouts as the API port.
  const limits = { ...LIMIT_DEFAULTS, maxConnections: 64 };
  const server = await startHealthServer(
    { ...NO_CHECKS, metrics: () => metrics.registry.metrics(), metricsContentType: metrics.registry.contentType },
    port,
    host,
    {
      options: { connectionsCheckingInterval: connectionsCheckingInterval(limits) },
      configure: (s) => applyLimits(s, limits),
      onRequest: firstRequest,
    },
  );
  const shown = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  return {
    url: `http://${shown.includes(':') ? `[${shown}]` : shown}:${server.port}/metrics`,
    port: server.port,
    close: () => server.close(),
  };
}
