import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { servePlugin, type PluginContext, type RunningPlugin } from './plugin-server.js';
import { failed, outputParameters, pending, running, succeeded } from './replies.js';

describe('plugin server (SDK)', () => {
  let dir: string;
  let tokenPath: string;
  let plugin: RunningPlugin;
  const seen: Array<{ config: unknown; ctx: PluginContext }> = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'plugflow-sdk-'));
    tokenPath = join(dir, 'token');
    writeFileSync(tokenPath, '  tok-1\n');
    plugin = await servePlugin<{ mode?: string }>({
      name: 'demo',
      port: 0,
      host: '127.0.0.1',
      tokenPath,
      execute: (config, ctx) => {
        seen.push({ config, ctx });
        if (config?.mode === 'throw') throw new Error('cannot do that');
        if (config?.mode === 'none') return undefined;
        return succeeded('done', { outputs: outputParameters({ a: '1' }) });
      },
    });
  });
  afterAll(async () => {
    await plugin.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const call = async (body: unknown, auth: string | null = 'Bearer tok-1', path = '/api/v1/template.execute', method = 'POST') => {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (auth !== null) headers.authorization = auth;
    const res = await request(`${plugin.url}${path}`, {
      method: method as 'POST',
      headers,
      body: method === 'GET' ? undefined : JSON.stringify(body),
    });
    return { status: res.statusCode, text: await res.body.text(), type: res.headers['content-type'] };
  };
  const args = (plugin: Record<string, unknown>) => ({
    workflow: { metadata: { name: 'wf', namespace: 'ns', uid: 'u' } },
    template: { name: 't', plugin },
  });

  it('answers its own template through the handler with typed context', async () => {
    const r = await call(args({ demo: { mode: 'ok' } }));
    expect(r.status).toBe(200);
    expect(r.type).toBe('application/json');
    expect(JSON.parse(r.text)).toEqual({
      node: { phase: 'Succeeded', message: 'done', outputs: { parameters: [{ name: 'a', value: '1' }] } },
    });
    const last = seen.at(-1)!;
    expect(last.config).toEqual({ mode: 'ok' });
    expect(last.ctx.workflow).toEqual({ name: 'wf', namespace: 'ns', uid: 'u' });
    expect(last.ctx.template.name).toBe('t');
  });

  it('answers {} for a template of another plugin without calling the handler', async () => {
    const before = seen.length;
    const r = await call(args({ other: {} }));
    expect([r.status, r.text]).toEqual([200, '{}']);
    expect(seen.length).toBe(before);
  });

  it('answers {} when the handler returns nothing', async () => {
    expect((await call(args({ demo: { mode: 'none' } }))).text).toBe('{}');
  });

  it('answers 403 with no body on a wrong or missing token (the file is trimmed)', async () => {
    for (const auth of ['Bearer tok-2', 'tok-1', 'Bearer  tok-1', '', null]) {
      const r = await call(args({ demo: {} }), auth);
      expect([r.status, r.text], String(auth)).toEqual([403, '']);
    }
  });

  it('re-reads the token file, so a replaced token counts at once', async () => {
    writeFileSync(tokenPath, 'tok-new');
    try {
      expect((await call(args({ demo: {} }), 'Bearer tok-1')).status).toBe(403);
      expect((await call(args({ demo: {} }), 'Bearer tok-new')).status).toBe(200);
    } finally {
      writeFileSync(tokenPath, 'tok-1');
    }
  });

  it('answers 404 for any other path or method', async () => {
    expect((await call(args({ demo: {} }), 'Bearer tok-1', '/api/v1/other.method')).status).toBe(404);
    expect((await call(undefined, 'Bearer tok-1', '/api/v1/template.execute', 'GET')).status).toBe(404);
    expect((await call(args({ demo: {} }), null, '/healthz')).status).toBe(404);
  });

  it('answers 400 for a body that is not ExecuteTemplateArgs, 500 when the handler throws', async () => {
    expect((await call('not an object')).status).toBe(400);
    const r = await call(args({ demo: { mode: 'throw' } }));
    expect([r.status, JSON.parse(r.text)]).toEqual([500, { message: 'cannot do that' }]);
  });
});

describe('reply helpers', () => {
  it('build nodes and carry requeue only on interim phases', () => {
    expect(running('half', { progress: '1/2', requeue: '5s' })).toEqual({
      node: { phase: 'Running', message: 'half', progress: '1/2' },
      requeue: '5s',
    });
    expect(pending(undefined, { requeue: '1m' })).toEqual({ node: { phase: 'Pending' }, requeue: '1m' });
    expect(failed('no')).toEqual({ node: { phase: 'Failed', message: 'no' } });
    expect(succeeded()).toEqual({ node: { phase: 'Succeeded' } });
  });
});
