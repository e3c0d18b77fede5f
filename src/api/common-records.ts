/**
 * Small records several others hold: pod metadata (a template's, every step pod's, the artifact
 * GC pod's) and a Secret key selector (HTTP headers, artifact credentials). A leaf module, so
 * that the records holding them import it without importing each other.
 */
import type { StringMap } from './container.js';
import { bool, str, stringMap } from './crd/schema-builders.js';
import { no } from './field-rules.js';
import { field, record, type RecordOf } from './record-declaration.js';

/** Labels and annotations added to the pod of a template (or every pod of a workflow). */
export const METADATA_RECORD = record('Metadata', {
  labels: field<StringMap>(stringMap()),
  annotations: field<StringMap>(stringMap()),
});
export interface Metadata extends RecordOf<typeof METADATA_RECORD.fields> {}

/** Kubernetes' SecretKeySelector, as far as plugflow reads it. */
export const SECRET_KEY_SELECTOR_RECORD = record('SecretKeySelector', {
  name: field<string>(str()),
  key: field<string>(str()).required(),
  optional: field<boolean>(bool(), no('a missing Secret always fails the step; optional Secrets are not implemented yet')),
});
