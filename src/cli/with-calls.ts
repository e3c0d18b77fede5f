/**
 * Runs a command's calls (over REST or the kubeconfig) and always closes them; a refusal of the
 * operation (OperationRefused: invalid input, not allowed) is printed and exits 1, anything else
 * is a crash the caller reports.
 */
import { OperationRefused } from '../operations/index.js';
import type { Printer } from './rest.js';

export async function withCalls<C extends { close(): Promise<void> }>(
  open: Promise<C>,
  p: Printer,
  fn: (calls: C) => Promise<number>,
): Promise<number> {
  const calls = await open;
  try {
    return await fn(calls);
  } catch (err) {
    if (!(err instanceof OperationRefused)) throw err;
    p.err(err.message);
    return 1;
  } finally {
    await calls.close();
  }
}
