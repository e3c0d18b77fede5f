import type { ExprEnv } from './compile.js';
import { valueToText } from './contracts.js';
import { newMap } from './values.js';

/**
 * The environment of event-binding expressions, shared by the event endpoint and the CLI:
 * `payload` (the JSON body), `metadata` (headers), `discriminator` and `namespace`.
 */

/** Raw headers as Node gives them: a header map (values string or list) or `rawHeaders` pairs. */
export type RawHeaders = Readonly<Record<string, string | readonly string[] | undefined>> | readonly string[];

/**
 * Event `metadata` from HTTP headers: only names that start with `x-`, lower-cased, each value
 * a list of strings (repeated headers keep every value). `authorization` never appears — it is
 * not an `x-` name, and credentials must not reach selectors or workflow parameters. Pass
 * Node's `req.rawHeaders` to keep repeated headers apart (the header map joins some of them).
 */
export function eventMetadataFromHeaders(headers: RawHeaders): Record<string, string[]> {
  const meta = newMap() as Record<string, string[]>;
  const addValue = (rawName: string, value: string): void => {
    const name = rawName.toLowerCase();
    if (!name.startsWith('x-') || name === 'authorization') return;
    (Object.hasOwn(meta, name) ? meta[name] : (meta[name] = [])).push(value);
  };
  if (Array.isArray(headers)) {
    for (let i = 0; i + 1 < headers.length; i += 2) addValue(String(headers[i]), String(headers[i + 1]));
    return meta;
  }
  for (const [name, value] of Object.entries(headers as Record<string, string | readonly string[] | undefined>)) {
    if (value === undefined) continue;
    if (typeof value === 'string') addValue(name, value);
    else for (const v of value) addValue(name, String(v));
  }
  return meta;
}

/** Short name of eventMetadataFromHeaders, for the event endpoint. */
export const eventMetadata = eventMetadataFromHeaders;

export interface EventInput {
  payload: unknown;
  /** Raw headers (metadata is derived from them)… */
  headers?: RawHeaders;
  /** …or metadata already derived. */
  metadata?: Readonly<Record<string, readonly string[]>>;
  discriminator?: string;
  namespace?: string;
}

export function eventEnvironment(input: EventInput): ExprEnv {
  const env = newMap() as Record<string, unknown>;
  env.payload = input.payload === undefined ? null : input.payload;
  env.metadata = input.metadata ?? (input.headers ? eventMetadataFromHeaders(input.headers) : newMap());
  env.discriminator = input.discriminator ?? '';
  env.namespace = input.namespace ?? '';
  return env;
}

/**
 * The parameter value of `valueFrom.event`: strings as they are, any other value as compact
 * JSON with sorted keys (`{"a":1}`, `3`, `true`, `null`), as the peer sends them.
 */
export function eventValueText(value: unknown): string {
  return valueToText(value, 'valueFrom.event');
}
