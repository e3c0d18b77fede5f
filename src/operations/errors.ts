/**
 * Why an operation on a workflow was refused before anything was changed. The CLI prints the
 * message; the REST routes answer with the code that fits `reason` (src/server/errors.ts).
 * Errors of the API server itself (not found, forbidden, conflict) stay ApiErrors.
 */
export class OperationRefused extends Error {
  constructor(
    /** `precondition`: the workflow is not in a state the operation applies to; `invalid`: bad arguments. */
    readonly reason: 'precondition' | 'invalid',
    message: string,
  ) {
    super(message);
    this.name = 'OperationRefused';
  }
}

/** How often an operation reads again and retries after a 409 (the controller wrote meanwhile). */
export const MAX_CONFLICT_RETRIES = 8;
