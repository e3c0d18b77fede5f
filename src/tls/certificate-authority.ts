/**
 * A private certificate authority for the TLS between plugflow's own parts where no operator
 * certificate is given: the local event bus of `plugflow dev --event-bus` and the tests (the
 * NATS nodes' client and route listeners, and the servers that verify them), and `plugflow
 * event-bus secrets`, which prints the same material as Kubernetes Secrets for the manifests'
 * bus. Certificates are P-256, signed by the CA (npm `selfsigned`, pure JavaScript), and carry
 * both serverAuth and clientAuth, so one certificate serves a NATS node as a listener and as the
 * client of its routes (whose peers verify it: only holders of the CA's certificates join).
 */
import { generate } from 'selfsigned';

export interface CertificateAuthority {
  cert: string;
  key: string;
}

export interface IssuedCertificate {
  cert: string;
  key: string;
}

const DAY_MS = 24 * 3600 * 1000;

/** A new CA, valid for `days` (default 365). */
export async function createCertificateAuthority(commonName: string, days = 365): Promise<CertificateAuthority> {
  const pems = await generate([{ name: 'commonName', value: commonName }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    notAfterDate: new Date(Date.now() + days * DAY_MS),
    extensions: [
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    ],
  });
  return { cert: pems.cert, key: pems.private };
}

/** A certificate for `dnsNames` and `ips`, signed by `ca`, for servers and for their clients. */
export async function issueCertificate(
  ca: CertificateAuthority,
  o: { commonName: string; dnsNames?: readonly string[]; ips?: readonly string[]; days?: number },
): Promise<IssuedCertificate> {
  const pems = await generate([{ name: 'commonName', value: o.commonName }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    notAfterDate: new Date(Date.now() + (o.days ?? 365) * DAY_MS),
    ca,
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
      { name: 'extKeyUsage', serverAuth: true, clientAuth: true },
      {
        name: 'subjectAltName',
        altNames: [
          ...(o.dnsNames ?? []).map((value) => ({ type: 2 as const, value })),
          ...(o.ips ?? []).map((ip) => ({ type: 7 as const, ip })),
        ],
      },
    ],
  });
  return { cert: pems.cert, key: pems.private };
}
