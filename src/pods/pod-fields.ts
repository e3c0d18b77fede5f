/** Small pod-spec helpers of the step pod builder (build-pod.ts). */
import type { Template } from '../api/index.js';

export function activeDeadline(template: Template, where: string): number | undefined {
  const v = template.activeDeadlineSeconds;
  if (v === undefined) return undefined;
  const n = typeof v === 'number' ? v : /^\d+$/.test(v.trim()) ? Number(v) : NaN;
  if (!Number.isInteger(n) || n <= 0)
    throw new Error(`${where}: activeDeadlineSeconds must be a positive integer, got ${JSON.stringify(v)}`);
  return n;
}

export function merged(a?: Record<string, string>, b?: Record<string, string>): Record<string, string> | undefined {
  return a || b ? { ...a, ...b } : undefined;
}

export function concat<T>(a?: T[], b?: T[]): T[] | undefined {
  return a || b ? [...(a ?? []), ...(b ?? [])] : undefined;
}
