/**
 * `plugflow event bus-secrets`: the Secrets the event bus of manifests/event-bus/ needs, as YAML
 * for `kubectl apply -f -`, made fresh on this machine:
 *
 * - `plugflow-event-bus-key` (`key`): the secret every server replica seals stored events with;
 * - `plugflow-event-bus-auth` (`password`): the bus user's password, read by the NATS nodes
 *   (environment) and by the servers (`--event-bus-password-file`);
 * - `plugflow-nats-tls` (`ca.crt`, `tls.crt`, `tls.key`): a CA of the bus's own and one
 *   certificate for every node's name, used for the clients' TLS and the routes' (whose peers
 *   must show it).
 *
 * Nothing is written to disk; the output is the only copy, so pipe it straight to kubectl.
 */
import type { Command } from 'commander';
import { randomBytes } from 'node:crypto';
import { stringify } from 'yaml';
import { DEFAULT_INSTALL_NAMESPACE } from '../api/index.js';
import { createCertificateAuthority, issueCertificate } from '../tls/certificate-authority.js';
import { positiveInt } from './option-values.js';

interface BusSecretsFlags {
  namespace: string;
  replicas: number;
  days: number;
}

/** The DNS names a node of the StatefulSet `plugflow-nats` answers to, in every form a client may use. */
export function natsNodeNames(namespace: string, replicas: number): string[] {
  const names = ['plugflow-nats', `plugflow-nats.${namespace}`, `plugflow-nats.${namespace}.svc`];
  for (let i = 0; i < replicas; i++) {
    const pod = `plugflow-nats-${i}.plugflow-nats`;
    names.push(pod, `${pod}.${namespace}`, `${pod}.${namespace}.svc`, `${pod}.${namespace}.svc.cluster.local`);
  }
  return names;
}

export async function busSecrets(flags: BusSecretsFlags): Promise<string> {
  const ca = await createCertificateAuthority('plugflow-event-bus-ca', flags.days);
  const node = await issueCertificate(ca, {
    commonName: 'plugflow-nats',
    dnsNames: natsNodeNames(flags.namespace, flags.replicas),
    days: flags.days,
  });
  const secret = (name: string, stringData: Record<string, string>, type = 'Opaque') => ({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace: flags.namespace, labels: { 'app.kubernetes.io/part-of': 'plugflow' } },
    type,
    stringData,
  });
  const docs = [
    secret('plugflow-event-bus-key', { key: randomBytes(32).toString('base64') }),
    secret('plugflow-event-bus-auth', { password: randomBytes(24).toString('base64url') }),
    // The CA's key is not kept: a new node certificate means a new CA (run this again, restart the bus and servers).
    secret('plugflow-nats-tls', { 'ca.crt': ca.cert, 'tls.crt': node.cert, 'tls.key': node.key }, 'kubernetes.io/tls'),
  ];
  return docs.map((d) => stringify(d, { lineWidth: 0 })).join('---\n');
}

export function registerBusSecretsCommand(event: Command): void {
  event
    .command('bus-secrets')
    .description("print the event bus's Secrets (sealing key, bus password, CA and node certificate) for `kubectl apply -f -`")
    .option('-n, --namespace <ns>', 'where plugflow and the bus are installed', DEFAULT_INSTALL_NAMESPACE)
    .option('--replicas <n>', 'nodes of the plugflow-nats StatefulSet the certificate names', positiveInt, 3)
    .option('--days <n>', 'how long the CA and the certificate are valid', positiveInt, 365)
    .action(async (flags: BusSecretsFlags) => {
      process.stdout.write(await busSecrets(flags));
    });
}
