import { describe, expect, it } from 'vitest';
import type { WorkflowSpec } from './index.js';
import { canonicalNames } from './peer-names.js';
import { validateWorkflow } from '../engine/validate.js';

const peerSpec = {
  entrypoint: 'main',
  metrics: { prometheus: [{ name: 'runs_total', help: 'Runs', counter: { value: '1' } }] },
  workflowMetadata: { labels: { s3: 'not-a-store' } },
  arguments: { parameters: [{ name: 'gcs', value: 'a parameter, not a store' }] },
  templates: [
    {
      name: 'main',
      archiveLocation: { s3: { bucket: 'b', endpoint: 'minio:9000', key: '{{workflow.name}}' } },
      inputs: { artifacts: [{ name: 'in', path: '/in', gcs: { bucket: 'g', key: 'k' } }] },
      outputs: {
        artifacts: [{ name: 'out', path: '/out', azure: { endpoint: 'https://a.blob.core.windows.net', container: 'c', blob: 'b' } }],
      },
      container: { image: 'alpine', command: ['true'] },
    },
  ],
} as unknown as WorkflowSpec;

describe("the peer's field names", () => {
  it("are renamed to the spec's along the records, never in labels or parameters, copying only what changes", () => {
    const out = canonicalNames(peerSpec, 'WorkflowSpec') as unknown as Record<string, any>;
    expect(Object.keys(out.metrics)).toEqual(['vendorP']);
    expect(out.templates[0].archiveLocation).toEqual({ vendorAObject: { bucket: 'b', endpoint: 'minio:9000', key: '{{workflow.name}}' } });
    expect(out.templates[0].inputs.artifacts[0]).toEqual({ name: 'in', path: '/in', vendorCObject: { bucket: 'g', key: 'k' } });
    expect(Object.keys(out.templates[0].outputs.artifacts[0])).toEqual(['name', 'path', 'vendorB']);
    expect(out.workflowMetadata).toBe((peerSpec as unknown as Record<string, unknown>).workflowMetadata);
    expect(out.arguments).toBe((peerSpec as unknown as Record<string, unknown>).arguments);
    expect((peerSpec as unknown as Record<string, any>).metrics.prometheus).toBeDefined(); // the input is not changed
    const canonical = { entrypoint: 'main', templates: [{ name: 'main', suspend: {} }] } as WorkflowSpec;
    expect(canonicalNames(canonical, 'WorkflowSpec')).toBe(canonical);
  });

  it("pass validation as the spec's names do; both names in one object are refused naming the two", () => {
    const wf = { apiVersion: 'plugflow.io/v1alpha1', kind: 'Workflow' as const, metadata: { name: 'w', namespace: 'n' } };
    expect(validateWorkflow({ ...wf, spec: peerSpec }).map((e) => e.message)).toEqual([]);
    const both = {
      entrypoint: 'main',
      templates: [
        {
          name: 'main',
          outputs: { artifacts: [{ name: 'o', path: '/o', s3: { key: 'a' }, vendorAObject: { key: 'b' } }] },
          container: { image: 'alpine', command: ['true'] },
        },
      ],
    } as unknown as WorkflowSpec;
    expect(validateWorkflow({ ...wf, spec: both }).map((e) => e.message)).toContain(
      "spec.templates[main].outputs.artifacts[o].s3 is given twice: s3 is the peer's name of vendorAObject; keep one",
    );
  });
});
