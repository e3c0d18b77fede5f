/**
 * The one kubelet endpoint the development tools need: container logs. The API server serves
 * `pods/log` (kubectl logs, `plugflow logs`, client-node's Log) by calling the node's kubelet at
 * `https://<InternalIP>:<daemonEndpoints.kubeletEndpoint.Port>/containerLogs/NS/POD/CONTAINER`.
 * The runner answers there from the log files it keeps, with `follow`, `tailLines` and
 * `limitBytes`. It listens on loopback with a self-signed certificate (the development control
 * plane does not verify kubelet certificates) and does not authenticate callers.
 */
import { createReadStream, existsSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { generateSelfSigned } from '../tls/tls-material.js';
import { LOCAL_IP } from './field-ref.js';
import { containerLogPath, readContainerLog } from './logs.js';

export interface LogSource {
  root: string;
  /** Whether more output may still come (the container runs or will be restarted). */
  mayGrow(namespace: string, pod: string, container: string): boolean;
}

export async function startKubeletServer(src: LogSource): Promise<{ port: number; close(): Promise<void> }> {
  const tls = await generateSelfSigned();
  const server: Server = createServer({ cert: tls.cert, key: tls.key }, (req, res) => {
    const url = new URL(req.url ?? '/', 'https://kubelet');
    if (url.pathname === '/healthz') {
      res.end('ok');
      return;
    }
    const m = /^\/containerLogs\/([^/]+)\/([^/]+)\/([^/]+)$/.exec(url.pathname);
    if (req.method !== 'GET' || !m) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end(`the local pod runner serves only /containerLogs, not ${url.pathname}\n`);
      return;
    }
    const [ns, pod, container] = m.slice(1).map(decodeURIComponent);
    const path = containerLogPath(src.root, ns, pod, container);
    if (!existsSync(path)) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end(`no log for container "${container}" of pod ${ns}/${pod}\n`);
      return;
    }
    const tailLines = Number(url.searchParams.get('tailLines') ?? NaN);
    const limitBytes = Number(url.searchParams.get('limitBytes') ?? NaN);
    let text = readContainerLog(src.root, ns, pod, container);
    if (Number.isInteger(tailLines) && tailLines >= 0) text = lastLines(text, tailLines);
    if (Number.isInteger(limitBytes) && limitBytes > 0) text = Buffer.from(text).subarray(0, limitBytes).toString('utf8');
    res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
    res.write(text);
    if (url.searchParams.get('follow') !== 'true') {
      res.end();
      return;
    }
    // Follow: send what is appended until the container is done and the file stops growing.
    let offset = statSync(path).size;
    const timer = setInterval(() => {
      const size = existsSync(path) ? statSync(path).size : offset;
      if (size > offset) {
        createReadStream(path, { start: offset, end: size - 1 }).pipe(res, { end: false });
        offset = size;
      } else if (!src.mayGrow(ns, pod, container)) {
        clearInterval(timer);
        res.end();
      }
    }, 250);
    req.on('close', () => clearInterval(timer));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, LOCAL_IP, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function lastLines(text: string, n: number): string {
  if (n === 0) return '';
  const lines = text.split('\n');
  const trailing = lines[lines.length - 1] === '' ? lines.pop() : undefined;
  return lines.slice(-n).join('\n') + (trailing !== undefined ? '\n' : '');
}
