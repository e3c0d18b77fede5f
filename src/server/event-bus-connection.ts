/**
 * How the server reaches the event bus, and what it refuses to reach it with.
 *
 * The bus holds every accepted event — payloads, and callers' sealed tokens — so a server
 * connects to it only authenticated and over TLS: the NATS account's user and password (the
 * password from a file, a mounted Secret: `--event-bus-password-file`), the bus's certificate
 * verified against `--event-bus-ca-file` (or the system's CAs). A bus URL that carries
 * credentials (`nats://user:pass@host`) is refused outright: URLs end up in logs, errors and
 * status pages. Connecting without credentials or TLS takes a flag that says the operator
 * accepts it (`--unsafe-event-bus-without-auth`), as `--unsafe-server-mode-without-auth` does
 * for the API.
 */
import type { ConnectionOptions } from '@nats-io/nats-core';

/** What a server needs to reach the bus: its URLs and how it proves who it is. */
export interface BusConnection {
  /** NATS URLs, e.g. `nats://plugflow-nats-0.plugflow-nats:4222` (several: the client fails over between them). */
  servers: string[];
  /** The bus account's user and password. */
  credentials?: { user: string; password: string };
  /** PEM of the CA the bus's certificates are verified against; without it, the system's CAs. */
  ca?: string;
  /** Connect in the clear and without credentials (only with an explicit unsafe flag). */
  unsafeWithoutAuth?: boolean;
}

export class BusConnectionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BusConnectionError';
  }
}

/** The user plugflow's server connects as, in the manifests' and `plugflow dev`'s bus. */
export const DEFAULT_BUS_USER = 'plugflow-server';

/** The NATS client's options for `c`, or a BusConnectionError saying what is missing. */
export function busConnectOptions(c: BusConnection): Pick<ConnectionOptions, 'servers' | 'user' | 'pass' | 'tls'> {
  if (c.servers.length === 0) throw new BusConnectionError('--event-bus names no NATS server');
  for (const s of c.servers) {
    if (/^[a-z][a-z0-9+.-]*:\/\/[^/]*@/i.test(s.trim()))
      throw new BusConnectionError(
        `the event bus URL ${redactUrl(s)} carries credentials, which would end up in logs and errors: ` +
          'give them with --event-bus-user and --event-bus-password-file (a mounted Secret) instead',
      );
  }
  if (c.unsafeWithoutAuth) {
    // Plain unless the server itself asks for TLS (the client then upgrades); no credentials
    // unless given.
    return { servers: c.servers, ...(c.credentials ? { user: c.credentials.user, pass: c.credentials.password } : {}) };
  }
  if (!c.credentials || c.credentials.password === '')
    throw new BusConnectionError(
      'the event bus needs credentials: give --event-bus-password-file (and --event-bus-user, default ' +
        `${DEFAULT_BUS_USER}); a bus anyone can reach holds every event and token. To connect without them ` +
        '(a test bus nobody else reaches), pass --unsafe-event-bus-without-auth',
    );
  return {
    servers: c.servers,
    user: c.credentials.user,
    pass: c.credentials.password,
    // TLS required: the client refuses a server that does not offer it.
    tls: c.ca ? { ca: c.ca } : {},
  };
}

/** A URL with any user information replaced by `***`, for messages. */
export function redactUrl(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/@]*@/i, '$1***@');
}
