/**
 * The records of the template kinds' own sections in THE list of supported and refused fields
 * (supported-fields.ts, which spreads these into its records): http (and the Secret key selector
 * its headers and the artifact stores share), resource, containerSet (its containers are
 * container records there) and data.
 */
import { no, ok, rec, type FieldRule } from './field-rules.js';
import type { RecordName } from './supported-fields.js';
import { ARTIFACT_RECORDS } from './supported-fields-artifacts.js';

export const KIND_RECORDS = {
  HTTP: {
    url: ok(),
    method: ok(),
    headers: rec('HTTPHeader', 'list'),
    body: ok(),
    bodyFrom: rec('HTTPBodySource'),
    timeoutSeconds: ok(),
    insecureSkipVerify: ok(),
    successCondition: ok(),
  },
  HTTPHeader: { name: ok(), value: ok(), valueFrom: rec('HTTPHeaderSource') },
  HTTPHeaderSource: { secretKeyRef: rec('SecretKeySelector') },
  SecretKeySelector: {
    name: ok(),
    key: ok(),
    optional: no('a missing Secret always fails the step; optional Secrets are not implemented yet'),
  },
  HTTPBodySource: { bytes: ok() },
  ResourceTemplate: {
    action: ok('get, create, apply (server-side), delete, replace, patch'),
    manifest: ok('one object (a list of operations for a json patch)'),
    manifestFrom: rec(
      'ManifestFrom',
      'one',
      "the manifest is an input artifact, fetched and printed by a pod of the step's own (its service account, no token), then applied by the controller as the step's account",
    ),
    mergeStrategy: ok('patch: strategic (default), merge, json'),
    flags: ok(
      'the kubectl arguments that mean something without kubectl: TYPE NAME, TYPE/NAME, -l/--selector, --field-selector, --all, -n, --cascade, --grace-period, --wait, --validate, --dry-run=server, --server-side, --force-conflicts, --ignore-not-found; any other is refused',
    ),
    setOwnerReference: ok('the workflow becomes the owner of the created object'),
    successCondition: ok(
      'label-selector syntax over paths into the object (status.succeeded > 2), re-read until it or the failure condition holds',
    ),
    failureCondition: ok('as successCondition; any requirement that holds fails the step'),
  },
  ManifestFrom: { artifact: rec('ManifestArtifact') },
  ManifestArtifact: {
    name: ok('an input artifact of the template (inputs.artifacts, with a path): its file is the manifest'),
    // Every other field of an input artifact: manifestFrom.artifact only points at one.
    ...Object.fromEntries(
      Object.keys(ARTIFACT_RECORDS.InputArtifact)
        .filter((k) => k !== 'name')
        .map((k) => [
          k,
          no(
            'manifestFrom.artifact only names an input artifact; give its source on inputs.artifacts (as the peer, which reads only the name)',
          ),
        ]),
    ),
  },
  ContainerSetTemplate: {
    containers: rec('ContainerNode', 'list'),
    volumeMounts: ok('mounted in every container of the set'),
    retryStrategy: rec('ContainerSetRetryStrategy'),
  },
  ContainerSetRetryStrategy: {
    retries: ok("how many times a container's failed command is run again, in place"),
    duration: ok('the wait between two runs (a Go duration)'),
  },
  Data: {
    source: rec('DataSource'),
    transformation: rec('TransformationStep', 'list', 'applied in order, each to the value the previous one gave'),
  },
  DataSource: { artifactPaths: rec('ArtifactPaths') },
  TransformationStep: { expression: ok('an expression over `data` (filter(data, {# endsWith ".log"}), map(data, …), len(data))') },
} satisfies Partial<Record<RecordName, Record<string, FieldRule>>>;
