/**
 * The Secret references of one pod's artifact plan: each distinct Secret key becomes one
 * environment variable (`PLUGFLOW_SECRET_<n>`) of the init and wait containers only, and the plan
 * names the variable — never the value.
 */
import type { SecretKeySelector } from '../api/index.js';

/** Environment variables of the init/wait containers: name → Secret reference. */
export type SecretEnvList = Array<{ env: string; ref: { name: string; key: string } }>;

export class SecretEnvError extends Error {}

/** One environment variable per distinct Secret key. */
export class SecretEnvs {
  private readonly byRef = new Map<string, string>();
  private readonly refs: SecretEnvList = [];

  constructor(private readonly fail: (message: string) => Error = (m) => new SecretEnvError(m)) {}

  env(ref: SecretKeySelector, field: string): string {
    if (!ref.name || !ref.key) throw this.fail(`${field} needs the name and key of a Secret`);
    const id = `${ref.name}\u0000${ref.key}`;
    let env = this.byRef.get(id);
    if (!env) {
      env = `PLUGFLOW_SECRET_${this.refs.length}`;
      this.byRef.set(id, env);
      this.refs.push({ env, ref: { name: ref.name, key: ref.key } });
    }
    return env;
  }

  list(): SecretEnvList {
    return this.refs;
  }
}
