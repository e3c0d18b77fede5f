/**
 * The soak's HTTP calls to the plugflow server: submit a workflow through the REST API, send an
 * event. Each call has a bounded time and never throws: a failure comes back as status 0 with
 * the error, since a refused connection during a server kill is an expected answer.
 */
import { Agent, request } from 'undici';
import type { Workflow } from '../../src/api/index.js';

export interface Answer {
  status: number;
  text: string;
  error?: string;
}

let pool: Agent | undefined;
const agent = () => (pool ??= new Agent({ connections: 16, keepAliveTimeout: 4000, connect: { timeout: 5000 } }));

export async function call(
  url: string,
  method: 'GET' | 'POST' | 'DELETE',
  token: string | undefined,
  body?: string,
  headers: Record<string, string> = {},
): Promise<Answer> {
  try {
    const res = await request(url, {
      method,
      headers: {
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...headers,
      },
      body,
      dispatcher: agent(),
      headersTimeout: 15_000,
      bodyTimeout: 15_000,
    });
    return { status: res.statusCode, text: await res.body.text() };
  } catch (err) {
    return { status: 0, text: '', error: (err as Error)?.message ?? String(err) };
  }
}

export function submitWorkflow(serverUrl: string, token: string, namespace: string, workflow: Workflow): Promise<Answer> {
  return call(`${serverUrl}/api/v1/workflows/${namespace}`, 'POST', token, JSON.stringify({ namespace, workflow }));
}

export function sendEvent(serverUrl: string, token: string, namespace: string, discriminator: string, body: string): Promise<Answer> {
  return call(`${serverUrl}/api/v1/events/${namespace}/${discriminator}`, 'POST', token, body, { 'x-soak': 'yes' });
}

export async function closeHttp(): Promise<void> {
  const p = pool;
  pool = undefined;
  await p?.close();
}
