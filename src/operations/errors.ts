import { isConflict } from '../kube/errors.js';

/**
 * Why an operation on a workflow was refused before anything was changed. The CLI prints the
 * message; the REST routes answer with the code that fits `reason` (src/server/errors.ts).
 * Errors of the API server itself (not found, forbidden, conflict) stay ApiErrors.
 */
export class OperationRefused extends Error {
  constructor(
    /**
     * `precondition`: the workflow is not in a state the operation applies to; `invalid`: bad
     * arguments; `not-found`: what was asked for does not exist; `unavailable`: a store it depends
     * on failed (an artifact's object store); `forbidden`: not allowed whoever asks (an artifact
     * outside the artifact repositories); `exists`: what it would create is already there.
     */
    readonly reason: 'precondition' | 'invalid' | 'not-found' | 'unavailable' | 'forbidden' | 'exists',
    message: string,
  ) {
    super(message);
    this.name = 'OperationRefused';
  }
}

/** How often an operation reads again and retries after a 409 (the controller wrote meanwhile). */
export const MAX_CONFLICT_RETRIES = 8;

/**
 * Runs `attempt` (which reads the workflow and writes with that resourceVersion) again after a
 * 409 Conflict, up to MAX_CONFLICT_RETRIES times: the controller writes running and just-finished
 * workflows often, so a read-then-write by a person's command races it.
 */
export async function retryOnConflict<T>(attempt: (n: number) => Promise<T>): Promise<T> {
  for (let n = 0; ; n++) {
    try {
      return await attempt(n);
    } catch (err) {
      if (!isConflict(err) || n >= MAX_CONFLICT_RETRIES) throw err;
    }
  }
}
