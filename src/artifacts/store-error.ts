/** A failure of an object or blob store, its message naming the location and what to check. */
export class StoreError extends Error {}

/** The words both drivers use for a missing object: a directory stored without archive is looked for then. */
export const NO_SUCH_OBJECT = 'no object has that key';
