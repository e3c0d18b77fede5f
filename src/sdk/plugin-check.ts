/**
 * `plugflow plugin check`: probes a running plugin for the protocol rules, so an author finds a
 * broken plugin before a workflow does. Each probe is one real request; nothing is assumed.
 */
import { randomBytes } from 'node:crypto';
import { request } from 'undici';
import { parseGoDuration, PLUGIN_EXECUTE_PATH } from '../api/index.js';
import { errorMessage } from '../log/error-message.js';

export interface CheckOptions {
  /** The token the plugin reads from its token file. */
  token: string;
  /** The plugin's name: the key of the `plugin` section it serves. */
  plugin: string;
  /** The value under that key in the probe template (default `{}`). */
  config?: unknown;
  timeoutMs?: number;
}

export interface CheckResult {
  check: string;
  ok: boolean;
  detail: string;
}

const PHASES = ['Pending', 'Running', 'Succeeded', 'Failed', 'Error'];

export async function checkPlugin(baseUrl: string, opts: CheckOptions): Promise<CheckResult[]> {
  const base = baseUrl.replace(/\/+$/, '');
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const workflow = { metadata: { name: 'plugflow-check', namespace: 'default', uid: '00000000-0000-0000-0000-000000000000' } };
  const own = JSON.stringify({ workflow, template: { name: 'plugflow-check', plugin: { [opts.plugin]: opts.config ?? {} } } });
  const foreignName = `plugflow-check-${randomBytes(4).toString('hex')}`;
  const foreign = JSON.stringify({ workflow, template: { name: 'plugflow-check', plugin: { [foreignName]: {} } } });
  const post = async (path: string, body: string, authorization?: string) => {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (authorization !== undefined) headers.authorization = authorization;
    const res = await request(`${base}${path}`, { method: 'POST', headers, body, signal: AbortSignal.timeout(timeoutMs) });
    return { status: res.statusCode, text: await res.body.text() };
  };
  const results: CheckResult[] = [];
  const probe = async (check: string, fn: () => Promise<[boolean, string]>) => {
    try {
      const [ok, detail] = await fn();
      results.push({ check, ok, detail });
    } catch (err) {
      const e = err as { message?: string; cause?: { message?: string } };
      results.push({ check, ok: false, detail: `request failed: ${e.cause?.message ?? e.message ?? String(err)}` });
    }
  };

  await probe('wrong token → 403 with no body', async () => {
    const r = await post(PLUGIN_EXECUTE_PATH, own, `Bearer ${opts.token}x`);
    return [r.status === 403 && r.text === '', `got ${r.status}${r.text ? ` with a ${r.text.length}-byte body` : ' with no body'}`];
  });
  await probe('no Authorization header → 403', async () => {
    const r = await post(PLUGIN_EXECUTE_PATH, own);
    return [r.status === 403, `got ${r.status}`];
  });
  await probe('unknown method → 404', async () => {
    const r = await post('/api/v1/unknown.method', own, `Bearer ${opts.token}`);
    return [r.status === 404, `got ${r.status}`];
  });
  await probe("another plugin's template → 200 {}", async () => {
    const r = await post(PLUGIN_EXECUTE_PATH, foreign, `Bearer ${opts.token}`);
    const ok = r.status === 200 && isEmptyObject(r.text);
    return [ok, `got ${r.status} ${clip(r.text)}`];
  });
  await probe(`its own template (plugin.${opts.plugin}) → 200 with a node`, async () => {
    const r = await post(PLUGIN_EXECUTE_PATH, own, `Bearer ${opts.token}`);
    if (r.status !== 200) return [false, `got ${r.status} ${clip(r.text)}`];
    return judgeReply(r.text);
  });
  return results;
}

/** Checks a reply body to our own template: JSON, a node with a known phase, a valid requeue. */
function judgeReply(text: string): [boolean, string] {
  let reply: { node?: { phase?: unknown; message?: unknown; progress?: unknown }; requeue?: unknown };
  try {
    reply = JSON.parse(text);
  } catch {
    return [false, `body is not JSON: ${clip(text)}`];
  }
  if (!reply || typeof reply !== 'object' || !reply.node || typeof reply.node !== 'object') return [false, `no node in ${clip(text)}`];
  const phase = reply.node.phase;
  if (typeof phase !== 'string' || !PHASES.includes(phase))
    return [false, `node.phase ${JSON.stringify(phase)} is not one of ${PHASES.join(', ')}`];
  const parts = [`phase ${phase}`];
  if (reply.node.message !== undefined) parts.push(`message ${JSON.stringify(reply.node.message)}`);
  if (reply.node.progress !== undefined) parts.push(`progress ${JSON.stringify(reply.node.progress)}`);
  if (reply.requeue !== undefined && reply.requeue !== null) {
    try {
      parseGoDuration(String(reply.requeue), { field: 'requeue' });
    } catch (err) {
      return [false, `requeue: ${errorMessage(err)}`];
    }
    parts.push(`requeue ${reply.requeue}`);
  } else if (phase === 'Pending' || phase === 'Running') {
    parts.push('no requeue: the agent will not call again');
  }
  return [true, parts.join(', ')];
}

function isEmptyObject(text: string): boolean {
  try {
    const v = JSON.parse(text);
    return v !== null && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 0;
  } catch {
    return false;
  }
}

function clip(text: string, max = 200): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}
