import { X509Certificate, createPrivateKey } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { generateSelfSigned, tlsMaterial } from './tls-material.js';

describe('tlsMaterial', () => {
  it('refuses a certificate without its key (and the reverse), naming both flags', async () => {
    await expect(tlsMaterial('/nonexistent/cert.pem')).rejects.toThrow(/--tls-cert and --tls-key go together/);
    await expect(tlsMaterial(undefined, '/nonexistent/key.pem')).rejects.toThrow(/--tls-cert and --tls-key go together/);
  });

  it('generates a certificate when no files are given', async () => {
    const m = await tlsMaterial();
    expect(m.generated).toBe(true);
    expect(m.fingerprint).toBeTruthy();
  });
});

describe('generateSelfSigned', () => {
  it('covers localhost and both loopback addresses, with a key that matches', async () => {
    const m = await generateSelfSigned();
    const cert = new X509Certificate(m.cert);
    expect(cert.subjectAltName).toContain('DNS:localhost');
    expect(cert.subjectAltName).toContain('IP Address:127.0.0.1');
    expect(cert.checkPrivateKey(createPrivateKey(m.key))).toBe(true);
    expect(cert.checkHost('localhost')).toBe('localhost');
    expect(new Date(cert.validTo).getTime()).toBeGreaterThan(Date.now() + 300 * 24 * 3600 * 1000);
  });
});
