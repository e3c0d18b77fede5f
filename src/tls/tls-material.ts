/**
 * TLS material of plugflow's HTTPS endpoints: the operator's own certificate and key for the
 * server (`--tls-cert`, `--tls-key`, PEM files), or a self-signed certificate generated in memory
 * at start-up (npm `selfsigned`, pure JavaScript on WebCrypto, so the image needs no openssl) —
 * the server without files, and the local runner's kubelet endpoint always. Shared by both, so
 * it lives outside either. Clients of a generated certificate must skip verification (`curl -k`,
 * `plugflow --insecure-skip-tls-verify`) or pin the fingerprint that the server logs.
 */
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { generate } from 'selfsigned';

export interface TlsMaterial {
  cert: string;
  key: string;
  /** SHA-256 fingerprint of a generated certificate (logged so clients can pin it). */
  fingerprint?: string;
  generated: boolean;
}

/** Loads the operator's PEM files, or generates a self-signed certificate when none is given. */
export async function tlsMaterial(certPath?: string, keyPath?: string): Promise<TlsMaterial> {
  if (certPath || keyPath) {
    if (!certPath || !keyPath) throw new Error('--tls-cert and --tls-key go together: give both files or neither');
    return { cert: readFileSync(certPath, 'utf8'), key: readFileSync(keyPath, 'utf8'), generated: false };
  }
  return generateSelfSigned();
}

/** A one-year self-signed certificate for localhost, the host name and the loopback addresses. */
export async function generateSelfSigned(): Promise<TlsMaterial> {
  const host = hostname();
  const pems = await generate([{ name: 'commonName', value: 'plugflow-server' }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    notAfterDate: new Date(Date.now() + 365 * 24 * 3600 * 1000),
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
      { name: 'extKeyUsage', serverAuth: true },
      {
        name: 'subjectAltName',
        altNames: [
          { type: 2, value: 'localhost' },
          { type: 2, value: 'plugflow-server' },
          ...(host && host !== 'localhost' && /^[A-Za-z0-9.-]+$/.test(host) ? [{ type: 2 as const, value: host }] : []),
          { type: 7, ip: '127.0.0.1' },
          { type: 7, ip: '::1' },
        ],
      },
    ],
  });
  return { cert: pems.cert, key: pems.private, fingerprint: pems.fingerprint, generated: true };
}
