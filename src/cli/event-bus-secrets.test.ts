import { X509Certificate } from 'node:crypto';
import { checkServerIdentity } from 'node:tls';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { busSecrets, natsNodeNames } from './event-bus-secrets.js';

const REPO = join(import.meta.dirname, '..', '..');

describe('plugflow event bus-secrets', () => {
  it("prints the three Secrets the bus's manifests name, with a certificate every node name verifies against", async () => {
    const docs = parseAllDocuments(await busSecrets({ namespace: 'plugflow', replicas: 3, days: 30 })).map((d) => d.toJS()) as {
      metadata: { name: string; namespace: string };
      type: string;
      stringData: Record<string, string>;
    }[];
    expect(docs.map((d) => [d.metadata.name, Object.keys(d.stringData).sort()])).toEqual([
      ['plugflow-event-bus-key', ['key']],
      ['plugflow-event-bus-auth', ['password']],
      ['plugflow-nats-tls', ['ca.crt', 'tls.crt', 'tls.key']],
    ]);
    expect(Buffer.from(docs[0]!.stringData.key!, 'base64').length).toBe(32);
    expect(docs[1]!.stringData.password!.length).toBeGreaterThanOrEqual(32);
    // Every Secret and key the manifests mount or read is among them.
    const manifests = ['nats.yaml', 'server-patch.yaml']
      .map((f) => readFileSync(join(REPO, 'manifests', 'event-bus', f), 'utf8'))
      .join('\n');
    for (const name of ['plugflow-event-bus-key', 'plugflow-event-bus-auth', 'plugflow-nats-tls']) expect(manifests).toContain(name);
    const tls = docs[2]!.stringData;
    const ca = new X509Certificate(tls['ca.crt']!);
    const cert = new X509Certificate(tls['tls.crt']!);
    expect(cert.verify(ca.publicKey)).toBe(true);
    expect(cert.checkIssued(ca)).toBe(true);
    for (const host of ['plugflow-nats-0.plugflow-nats', 'plugflow-nats-2.plugflow-nats', 'plugflow-nats-1.plugflow-nats.plugflow.svc'])
      expect(checkServerIdentity(host, { subjectaltname: cert.subjectAltName! } as never), host).toBeUndefined();
    expect(checkServerIdentity('evil.example', { subjectaltname: cert.subjectAltName! } as never)).toBeInstanceOf(Error);
    // A second run makes new secrets.
    const again = parseAllDocuments(await busSecrets({ namespace: 'plugflow', replicas: 3, days: 30 })).map((d) => d.toJS());
    expect(again[1].stringData.password).not.toBe(docs[1]!.stringData.password);
  });

  it('names every node of the StatefulSet in each form a client may use', () => {
    const names = natsNodeNames('ops', 2);
    expect(names).toContain('plugflow-nats-1.plugflow-nats.ops.svc.cluster.local');
    expect(names).not.toContain('plugflow-nats-2.plugflow-nats');
  });
});
