/** A step's artifacts cannot be planned: the message names the field and what is wrong. */
export class ArtifactPlanError extends Error {}
