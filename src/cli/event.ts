/**
 * `plugflow event send NAMESPACE [DISCRIMINATOR] --data JSON -H 'X-Name: v'`: posts an event
 * to a plugflow server's event endpoint, like the curl command in examples/events/.
 */
import type { Command } from 'commander';
import { readFileSync } from 'node:fs';
import { RestClient } from './rest-client.js';
import { errorMessage } from '../log/error-message.js';
import { registerBusSecretsCommand } from './event-bus-secrets.js';

export interface EventSendFlags {
  data?: string;
  header: string[];
  server?: string;
  token?: string;
  insecureSkipTlsVerify?: boolean;
  retry?: number;
}

/** `Name: value` → [name, value]; several -H with one name make a list. */
export function parseHeaders(lines: string[]): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon <= 0) throw new Error(`-H expects "Name: value", got "${line}"`);
    const name = line.slice(0, colon).trim();
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) throw new Error(`-H: "${name}" is not a valid header name`);
    (out[name] ??= []).push(line.slice(colon + 1).trim());
  }
  return out;
}

/** The body: `--data JSON`, `--data @file` or `--data @-` (stdin); it must be JSON. */
export function eventBody(data: string | undefined): string {
  if (data === undefined) throw new Error('--data is required: the JSON event, or @file');
  const text = data.startsWith('@') ? readFileSync(data === '@-' ? 0 : data.slice(1), 'utf8') : data;
  try {
    JSON.parse(text);
  } catch (err) {
    throw new Error(`--data is not JSON: ${errorMessage(err)}`);
  }
  return text;
}

export async function runEventSend(
  namespace: string,
  discriminator: string | undefined,
  flags: EventSendFlags,
  out = console.log,
): Promise<number> {
  const server = flags.server ?? process.env.PLUGFLOW_SERVER;
  if (!server) throw new Error('--server is required (or set PLUGFLOW_SERVER)');
  const client = new RestClient({
    server,
    token: flags.token ?? process.env.PLUGFLOW_TOKEN,
    insecureSkipTlsVerify: flags.insecureSkipTlsVerify,
  });
  try {
    const body = eventBody(flags.data);
    const headers = parseHeaders(flags.header);
    for (let attempt = 0; ; attempt++) {
      const res = await client.sendEvent(namespace, discriminator ?? '', body, headers);
      if (res.status === 503 && attempt < (flags.retry ?? 0)) {
        await new Promise((r) => setTimeout(r, 1000 * 2 ** Math.min(attempt, 4)));
        continue;
      }
      out(`${res.status} ${JSON.stringify(res.body ?? '')}`);
      return res.status >= 200 && res.status < 300 ? 0 : 1;
    }
  } finally {
    await client.close();
  }
}

export function registerEventCommands(program: Command): void {
  const event = program.command('event').description('send events to a plugflow server; make the Secrets of its event bus');
  registerBusSecretsCommand(event);
  event
    .command('send <namespace> [discriminator]')
    .description('POST an event to /api/v1/events/NAMESPACE/DISCRIMINATOR')
    .option('-d, --data <json>', 'the event: JSON text, @file or @- for stdin')
    .option(
      '-H, --header <header>',
      'an extra header, "X-Name: value" (repeatable; only x- headers reach bindings)',
      (v: string, prev: string[]) => [...prev, v],
      [],
    )
    .option('--server <url>', 'plugflow server address; default $PLUGFLOW_SERVER')
    .option('--token <token>', 'bearer token (client auth mode); default $PLUGFLOW_TOKEN')
    .option('-k, --insecure-skip-tls-verify', "accept the server's certificate unchecked (a generated self-signed one)")
    .option('--retry <n>', 'retry this many times on 503 (queue full), backing off', (v) => Number.parseInt(v, 10), 0)
    .action(async (namespace: string, discriminator: string | undefined, flags: EventSendFlags) => {
      process.exitCode = await runEventSend(namespace, discriminator, flags);
    });
}
