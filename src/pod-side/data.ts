/**
 * `plugflow executor data`: the main container of a data template's pod (build-pod.ts). It lists
 * the objects of `source.artifactPaths` (every key under its key prefix, as full keys — what the
 * peer's data template gives), applies each `transformation` expression in turn to `data` (the
 * value so far), and prints the result as JSON: the wait container reports it as
 * `outputs.result`, so a later step can loop over it with `withParam`.
 */
import type { DataPlan } from '../artifacts/plan.js';
import { credentialsFromEnv, listStored } from '../artifacts/store.js';
import { compile } from '../expr/index.js';
import { errorMessage } from '../log/error-message.js';

import { ENV_DATA } from '../pods/layout.js';

/** Applies the transformation steps in order; an error names the step (its index and expression). */
export function transformData(data: unknown, steps: ReadonlyArray<{ expression: string }>): unknown {
  let value = data;
  steps.forEach((step, i) => {
    const what = `data.transformation[${i}].expression`;
    try {
      value = compile(step.expression, { what }).evaluate({ data: value });
    } catch (err) {
      throw new Error(`${what} ${JSON.stringify(step.expression)}: ${errorMessage(err)}`);
    }
  });
  return value;
}

export function dataPlanFromEnv(env: NodeJS.ProcessEnv = process.env): DataPlan {
  const text = env[ENV_DATA];
  if (!text) throw new Error(`${ENV_DATA} is not set: this command runs in the pod of a data template`);
  let plan: unknown;
  try {
    plan = JSON.parse(text);
  } catch (err) {
    throw new Error(`${ENV_DATA} is not JSON: ${errorMessage(err)}`);
  }
  const p = plan as Partial<DataPlan>;
  if (!p || typeof p !== 'object' || !p.listing || !Array.isArray(p.transformation)) {
    throw new Error(`${ENV_DATA} must hold {listing, transformation}`);
  }
  return p as DataPlan;
}

/** Lists, transforms, and returns the JSON text the container prints. */
export async function runData(plan: DataPlan, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const keys = await listStored(plan.listing, credentialsFromEnv(plan.listing, env));
  return JSON.stringify(transformData(keys.sort(), plan.transformation));
}
