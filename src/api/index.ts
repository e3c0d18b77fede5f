/**
 * Public surface of src/api: record types from the spec, shared constants, value parsers and
 * validation helpers. Other modules import from here, never from the files directly.
 */
export * from './constants.js';
export * from './shard-bucket.js';
export * from './values/scalars.js';
export * from './container.js';
export * from './scheduling.js';
export * from './volume.js';
export * from './artifact.js';
export * from './parameter.js';
export * from './template.js';
export * from './workflow.js';
export * from './workflow-status.js';
export * from './cron-workflow.js';
export * from './plugin.js';
export * from './event-binding.js';
export * from './taskset.js';
export * from './template-kind.js';
export * from './values/enums.js';
export * from './values/duration.js';
export * from './values/quantity.js';
export * from './values/any-string.js';
export * from './values/int-or-string.js';
export * from './values/plugin-section.js';
export * from './user-json.js';
export * from './validation/field-path.js';
export * from './validation/field-error.js';
export { loadCrds, CRDS_DIR } from './crd/load-crds.js';
export { crdDefinitions, CRD_CATEGORY, type CustomResourceDefinition } from './crd/definitions.js';
export { renderCrdFiles } from './crd/render.js';
export * from './compressed-nodes.js';
export * from './offloaded-nodes.js';
export * from './readable-workflow.js';
export { CRD_FILE_HEADER } from './crd/render.js';
export { workflowShapeProblems, workflowShapeValidator } from './crd/workflow-shape.js';
export { bothNamesDetail, canonicalNames, specNameIn } from './peer-names.js';
export { withFieldsDoc } from './supported-fields-doc.js';
export { fieldRule, type FieldShape, type RecordName } from './supported-fields.js';
export { annotationProblems, labelProblems, NAMESPACE_NAME } from './values/object-metadata.js';
export { parseRefspec } from './values/refspec.js';
