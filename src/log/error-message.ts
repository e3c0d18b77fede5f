/**
 * An error that knows a better one-line description than its `message` (e.g. the API server's
 * reply, which names the request and the HTTP status as well).
 */
export interface Describable {
  describe(): string;
}

function isDescribable(err: unknown): err is Describable {
  return typeof err === 'object' && err !== null && typeof (err as Partial<Describable>).describe === 'function';
}

/**
 * The one way to turn anything thrown into text for a log line or a message users read. Values
 * thrown that are not Errors (strings, numbers, plain objects) are described, never dropped.
 */
export function errorMessage(err: unknown): string {
  if (isDescribable(err)) return err.describe();
  if (err instanceof Error) return err.message;
  return String(err);
}
