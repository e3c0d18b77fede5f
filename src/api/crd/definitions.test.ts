import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { crdDefinitions, type CustomResourceDefinition } from './definitions.js';
import { CRDS_DIR, loadCrds } from './load-crds.js';
import { CRD_FILE_HEADER, renderCrdFiles } from './render.js';
import { structuralProblems } from './schema-walk.js';

function byKind(kind: string): CustomResourceDefinition {
  const crd = crdDefinitions().find((c) => c.spec.names.kind === kind);
  if (!crd) throw new Error(`no CRD for ${kind}`);
  return crd;
}

describe('crds/ on disk', () => {
  it('matches what hack/gen-crds.ts generates (run `npx tsx hack/gen-crds.ts` after a schema change)', () => {
    const wanted = renderCrdFiles();
    const onDisk = readdirSync(CRDS_DIR)
      .filter((f) => f.endsWith('.yaml'))
      .sort();
    expect(onDisk).toEqual([...wanted.keys()].sort());
    for (const [name, text] of wanted) {
      expect(readFileSync(join(CRDS_DIR, name), 'utf8'), `crds/${name} is stale`).toBe(text);
    }
  });

  it('starts every file with the do-not-edit header and parses back to the definitions', () => {
    for (const [name, text] of renderCrdFiles()) {
      expect(text.startsWith(`${CRD_FILE_HEADER}\n`), name).toBe(true);
    }
    const byName = (a: any, b: any) => a.metadata.name.localeCompare(b.metadata.name);
    expect(loadCrds().sort(byName)).toEqual(
      crdDefinitions()
        .map((c) => parse(JSON.stringify(c)))
        .sort(byName),
    );
  });

  it('loadCrds refuses a file that holds something else', async () => {
    const { mkdtempSync, writeFileSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const dir = mkdtempSync(join(tmpdir(), 'crds-'));
    try {
      writeFileSync(join(dir, 'x.yaml'), 'apiVersion: v1\nkind: ConfigMap\n');
      expect(() => loadCrds(dir)).toThrow(/x\.yaml: expected a CustomResourceDefinition, found kind ConfigMap/);
    } finally {
      rmSync(dir, { recursive: true });
    }
  });
});

describe('CRD definitions', () => {
  it("keeps a Workflow's spec and status atomic for field management (managedFields name them, not every node)", () => {
    const root = byKind('Workflow').spec.versions[0]!.schema.openAPIV3Schema;
    expect(root.properties?.spec?.['x-kubernetes-map-type']).toBe('atomic');
    expect(root.properties?.status?.['x-kubernetes-map-type']).toBe('atomic');
    // Templates stay granular: several people may apply parts of one.
    expect(byKind('WorkflowTemplate').spec.versions[0]!.schema.openAPIV3Schema.properties?.spec?.['x-kubernetes-map-type']).toBeUndefined();
  });

  it.each([
    ['Workflow', 'workflows', 'wf', 'Namespaced', false], // status and labels in one write (docs/workflow-status.md)
    ['WorkflowTemplate', 'workflowtemplates', 'wftmpl', 'Namespaced', false],
    ['ClusterWorkflowTemplate', 'clusterworkflowtemplates', 'cwftmpl', 'Cluster', false],
    ['WorkflowEventBinding', 'workfloweventbindings', 'wfeb', 'Namespaced', false],
    ['WorkflowTaskSet', 'workflowtasksets', 'wfts', 'Namespaced', true],
  ] as const)('%s: plural %s, short name %s, %s, status subresource %s', (kind, plural, short, scope, status) => {
    const crd = byKind(kind);
    expect(crd.metadata.name).toBe(`${plural}.plugflow.io`);
    expect(crd.spec.group).toBe('plugflow.io');
    expect(crd.spec.names).toMatchObject({ kind, plural, shortNames: [short], categories: ['plugflow'], listKind: `${kind}List` });
    expect(crd.spec.scope).toBe(scope);
    expect(crd.spec.versions).toHaveLength(1);
    const v = crd.spec.versions[0]!;
    expect(v).toMatchObject({ name: 'v1alpha1', served: true, storage: true });
    expect(v.subresources?.status !== undefined).toBe(status);
    expect(v.additionalPrinterColumns?.map((c) => c.name)).toContain('Age');
  });

  it('shows phase, age and message for workflows', () => {
    const cols = byKind('Workflow').spec.versions[0]!.additionalPrinterColumns!;
    expect(cols.map((c) => [c.name, c.jsonPath])).toEqual([
      ['Phase', '.status.phase'],
      ['Age', '.metadata.creationTimestamp'],
      ['Message', '.status.message'],
    ]);
  });

  it('has structural schemas only', () => {
    for (const crd of crdDefinitions()) {
      expect(structuralProblems(crd.spec.versions[0]!.schema.openAPIV3Schema), crd.metadata.name).toEqual([]);
    }
  });

  it('the structural check catches the mistakes it is for', () => {
    expect(structuralProblems({ properties: { a: { type: 'string' } } })).toEqual([
      '<root>: no type',
      '<root>: properties on a untyped node',
    ]);
    expect(structuralProblems({ type: 'array' })).toEqual(['<root>: array without items']);
    expect(structuralProblems({ type: 'string', 'x-kubernetes-int-or-string': true })).toEqual([
      '<root>: int-or-string must not have a type',
      '<root>: int-or-string without its anyOf pattern',
    ]);
    expect(structuralProblems({ type: 'object', anyOf: [{ type: 'string' }] })).toEqual([
      '<root>: anyOf is only allowed as the int-or-string pattern',
    ]);
    expect(
      structuralProblems({
        type: 'array',
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['name'],
        items: { type: 'object', properties: { name: { type: 'string' } } },
      }),
    ).toEqual(['<root>: list-map key name is not required']);
    expect(structuralProblems({ type: 'object', required: ['x'], properties: {} })).toEqual(['<root>: required field x is not declared']);
  });

  it('keeps the one-key rule of the plugin section in the schema', () => {
    const templates = byKind('Workflow').spec.versions[0]!.schema.openAPIV3Schema.properties!.spec!.properties!.templates!;
    expect(templates.items!.properties!.plugin).toMatchObject({ type: 'object', minProperties: 1, maxProperties: 1 });
    expect(templates.items!.required).toEqual(['name']);
    expect(templates.items!['x-kubernetes-validations']![0]!.rule).toContain('has(self.containerSet)');
  });
});
