/**
 * The event bus as manifests/event-bus/ installs it (issue 44, T4-1), run with the real
 * nats-server on this machine: the ConfigMap's nats.conf, the Secrets `plugflow event bus-secrets`
 * prints (mounted where the StatefulSet mounts them, here under a temporary directory), the
 * password in the environment as the StatefulSet gives it.
 *
 * - the whole config, cluster and route TLS included, is one nats-server accepts (`-t`), and a
 *   config whose certificate file is missing is not (so the check can fail);
 * - one node of it (routes left out: their names resolve only in the cluster) requires TLS and a
 *   login: the server's login over TLS, with the node's certificate verified against the CA for
 *   a node's name, is let in; no login or a wrong password is refused.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect as netConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { parseAllDocuments } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { busSecrets } from '../src/cli/event-bus-secrets.js';
import { freePort } from '../src/devenv/control-plane.js';
import { ensureNatsServerBinary } from '../src/devenv/nats-cluster.js';
import { REPO_ROOT } from './support/apply.js';

interface Secret {
  metadata: { name: string };
  stringData: Record<string, string>;
}

describe('the event bus of manifests/event-bus/, with the Secrets of `plugflow event bus-secrets`', () => {
  const dir = mkdtempSync(join(tmpdir(), 'plugflow-bus-manifest-'));
  let bin: string;
  let secrets: Secret[];
  let config: string;
  const env = () => ({ PATH: process.env.PATH ?? '', POD_NAME: 'plugflow-nats-0', PLUGFLOW_BUS_PASSWORD: password() });
  const password = () => secrets.find((s) => s.metadata.name === 'plugflow-event-bus-auth')!.stringData.password!;

  beforeAll(async () => {
    bin = await ensureNatsServerBinary();
    secrets = parseAllDocuments(await busSecrets({ namespace: 'plugflow', replicas: 3, days: 30 })).map((d) => d.toJS() as Secret);
    const tls = join(dir, 'tls');
    mkdirSync(tls);
    for (const [k, v] of Object.entries(secrets.find((s) => s.metadata.name === 'plugflow-nats-tls')!.stringData))
      writeFileSync(join(tls, k), v);
    const cm = parseAllDocuments(readFileSync(join(REPO_ROOT, 'manifests', 'event-bus', 'nats.yaml'), 'utf8'))
      .map((d) => d.toJS() as { kind: string; data?: Record<string, string> })
      .find((d) => d.kind === 'ConfigMap')!;
    config = cm
      .data!['nats.conf']!.replaceAll('/etc/nats/tls', tls)
      .replace('store_dir: /data', `store_dir: ${JSON.stringify(join(dir, 'data'))}`);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const check = (text: string) => {
    const file = join(dir, `check-${Math.random().toString(36).slice(2)}.conf`);
    writeFileSync(file, text);
    return spawnSync(bin, ['-t', '-c', file], { env: env(), encoding: 'utf8' });
  };

  it('nats-server takes the whole config with those Secrets, and refuses it with a certificate missing', () => {
    const ok = check(config);
    expect(ok.status, ok.stderr).toBe(0);
    const broken = check(config.replaceAll('tls.key', 'missing.key'));
    expect(broken.status).not.toBe(0);
    expect(broken.stderr + broken.stdout).toMatch(/missing\.key/);
  });

  it("one node: the server's login over TLS is let in; no login or a wrong password is not", async () => {
    const [client, http] = [await freePort(), await freePort()];
    const single = config
      .replace(/cluster \{[\s\S]*$/, '')
      .replace('port: 4222', `listen: "127.0.0.1:${client}"`)
      .replace('http: 127.0.0.1:8222', `http: "127.0.0.1:${http}"`);
    const file = join(dir, 'single.conf');
    writeFileSync(file, single);
    const node = spawn(bin, ['-c', file], { env: env(), stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    node.stderr.on('data', (d: Buffer) => (out += d.toString()));
    try {
      for (const until = Date.now() + 20_000; ;) {
        const up = await fetch(`http://127.0.0.1:${http}/healthz`).then(
          (r) => r.ok,
          () => false,
        );
        if (up) break;
        if (Date.now() > until) throw new Error(`nats-server did not come up:\n${out}`);
        await new Promise((r) => setTimeout(r, 200));
      }
      const ca = secrets.find((s) => s.metadata.name === 'plugflow-nats-tls')!.stringData['ca.crt']!;
      const login = (user: string | undefined, pass: string | undefined) => natsLogin(client, ca, user, pass);
      expect(await login('plugflow-server', password())).toMatch(/PONG/);
      expect(await login(undefined, undefined)).toMatch(/Authorization Violation/);
      expect(await login('plugflow-server', 'guessed')).toMatch(/Authorization Violation/);
    } finally {
      node.kill('SIGKILL');
    }
  });
});

/**
 * Speaks NATS by hand: reads INFO in the clear, upgrades to TLS verifying the node's certificate
 * against `ca` for the name of node 0 (the name the servers use), sends CONNECT with the login
 * and PING, and gives back what the node answered before PONG or hanging up.
 */
function natsLogin(port: number, ca: string, user: string | undefined, pass: string | undefined): Promise<string> {
  return new Promise((resolve, reject) => {
    const raw = netConnect(port, '127.0.0.1');
    raw.once('error', reject);
    raw.once('data', () => {
      const socket = tlsConnect({ socket: raw, ca, servername: 'plugflow-nats-0.plugflow-nats' }, () => {
        const creds = user === undefined ? '' : `,"user":${JSON.stringify(user)},"pass":${JSON.stringify(pass)}`;
        socket.write(`CONNECT {"verbose":false,"pedantic":false${creds}}\r\nPING\r\n`);
      });
      let seen = '';
      socket.on('data', (d: Buffer) => {
        seen += d.toString();
        if (/PONG|-ERR/.test(seen)) socket.end();
      });
      socket.setTimeout(5_000, () => socket.destroy());
      socket.on('close', () => resolve(seen));
      socket.on('error', (err) => resolve(`${seen}<${err.message}>`));
    });
  });
}
