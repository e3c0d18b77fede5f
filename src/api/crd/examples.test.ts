/**
 * Every plugflow document under examples/ must pass the CRD schemas and lose no field to
 * pruning: the schemas may only refuse what is really wrong.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readYamlDocuments } from '../../yaml/kube-yaml.js';
import { API_VERSION } from '../constants.js';
import { crdDefinitions } from './definitions.js';
import { CRDS_DIR } from './load-crds.js';
import { OfflineValidator } from './offline-validator.js';
import { prunedFields } from './schema-walk.js';

const EXAMPLES_DIR = join(CRDS_DIR, '..', 'examples');

function yamlFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return yamlFiles(path);
    return /\.ya?ml$/.test(name) ? [path] : [];
  });
}

const crds = new Map(crdDefinitions().map((c) => [c.spec.names.kind, c]));
const documents = yamlFiles(EXAMPLES_DIR).flatMap((file) =>
  (readYamlDocuments(readFileSync(file, 'utf8'), file) as Array<{ apiVersion?: string; kind?: string } | null>)
    .filter((d): d is { apiVersion: string; kind: string } => d?.apiVersion === API_VERSION && crds.has(d.kind ?? ''))
    .map((doc, i) => ({ where: `${relative(EXAMPLES_DIR, file)}#${i}`, doc })),
);

describe('examples/ against the CRD schemas', () => {
  it('has plugflow documents to check', () => {
    expect(documents.length).toBeGreaterThan(0);
  });

  it.each(documents.map((d) => [d.where, d.doc] as const))('%s is valid and keeps every field', (_where, doc) => {
    const crd = crds.get(doc.kind)!;
    expect(new OfflineValidator(crd).check(doc).map((e) => e.message)).toEqual([]);
    expect(prunedFields(crd.spec.versions[0]!.schema.openAPIV3Schema, doc)).toEqual([]);
  });
});
