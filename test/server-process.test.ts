/**
 * `plugflow server` as a process: JSON log lines on stderr, HTTPS with a generated certificate,
 * health endpoints, and a clean exit on SIGTERM.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from './support/apply.js';
import { call, serverKubeConfig } from './support/server.js';

describe('plugflow server (process)', () => {
  it('logs JSON, serves HTTPS, and exits 0 on SIGTERM after stopping', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'plugflow-server-'));
    const kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(kubeconfig, (await serverKubeConfig()).exportConfig(), { mode: 0o600 });
    const proc = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        join(REPO_ROOT, 'src', 'cli', 'main.ts'),
        'server',
        '--kubeconfig',
        kubeconfig,
        '--port',
        '0',
        '--metrics-port',
        '0',
        '--host',
        '127.0.0.1',
      ],
      {
        cwd: REPO_ROOT,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const lines: string[] = [];
    let buffered = '';
    proc.stderr.on('data', (d: Buffer) => {
      buffered += d.toString();
      const parts = buffered.split('\n');
      buffered = parts.pop()!;
      lines.push(...parts.filter((l) => l.trim()));
    });
    const exited = new Promise<number | null>((r) => proc.on('exit', (code) => r(code)));
    try {
      const started = await new Promise<{ url: string; tls: string; metricsUrl: string }>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`server did not start:\n${lines.join('\n')}`)), 60_000);
        const poll = setInterval(() => {
          const line = lines.find((l) => l.includes('"server started"'));
          if (line) {
            clearInterval(poll);
            clearTimeout(timer);
            resolve(JSON.parse(line));
          }
        }, 50);
      });
      expect(started.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
      expect(started.tls).toBe('self-signed');
      expect((await call('GET', `${started.url}/healthz`)).status).toBe(200);
      expect((await call('GET', `${started.url}/readyz`)).status).toBe(200);
      expect((await call('GET', `${started.url}/metrics`)).status).toBe(404);
      expect((await call('GET', started.metricsUrl)).text).toContain('plugflow_event_queue_capacity');
      const noToken = await call('GET', `${started.url}/api/v1/workflows/default`);
      expect(noToken.status).toBe(401);
      proc.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      if (proc.exitCode === null) proc.kill('SIGKILL');
    }
    const logs = lines.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { message: string; component: string; level: string });
    expect(logs.map((l) => l.message)).toEqual(
      expect.arrayContaining(['server started', 'signal received', 'server shutting down: draining the event queue', 'server stopped']),
    );
    expect(logs.every((l) => l.component === 'server' && typeof l.level === 'string')).toBe(true);
  });

  it('refuses --auth-mode=server without a guard, and warns loudly when started with the unsafe flag', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'plugflow-server-'));
    const kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(kubeconfig, (await serverKubeConfig()).exportConfig(), { mode: 0o600 });
    const run = (extra: string[], stopWhen?: string) =>
      new Promise<{ code: number | null; stderr: string }>((resolve) => {
        const proc = spawn(
          process.execPath,
          [
            '--import',
            'tsx',
            join(REPO_ROOT, 'src', 'cli', 'main.ts'),
            'server',
            '--kubeconfig',
            kubeconfig,
            '--port',
            '0',
            '--metrics-port',
            '0',
            '--host',
            '127.0.0.1',
            '--secure=false',
            '--auth-mode=server',
            ...extra,
          ],
          {
            cwd: REPO_ROOT,
            stdio: ['ignore', 'pipe', 'pipe'],
          },
        );
        let stderr = '';
        let stopping: NodeJS.Timeout | undefined;
        const timer = setTimeout(() => proc.kill('SIGKILL'), 60_000);
        proc.stderr.on('data', (d: Buffer) => {
          stderr += d.toString();
          // The signal handlers are installed once startServer returns, a moment after the log line.
          if (stopWhen && stderr.includes(stopWhen) && !stopping) stopping = setTimeout(() => proc.kill('SIGTERM'), 1000);
        });
        proc.on('exit', (code) => {
          clearTimeout(timer);
          resolve({ code, stderr });
        });
      });
    const refused = await run([]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("--auth-mode=server runs every call with the server's own account, so it needs a guard");
    const unsafe = await run(['--unsafe-server-mode-without-auth'], 'server started');
    expect(unsafe.code).toBe(0);
    expect(unsafe.stderr).toMatch(
      /"level":"error".*UNSAFE: --auth-mode=server with --unsafe-server-mode-without-auth: ANYONE who reaches this port/,
    );
  });
});
