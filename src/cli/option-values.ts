/**
 * Parsers for command-line option values shared by the long-running commands, so every command
 * refuses a bad number with the same words.
 */
import { InvalidArgumentError } from 'commander';

/** A whole number of at least 1 (workers, sizes, counts). */
export function positiveInt(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('expected a whole number of at least 1');
  return n;
}

/** A TCP port; 0 lets the system pick a free one. */
export function port(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError('expected a port number (0–65535; 0 picks a free one)');
  return n;
}
