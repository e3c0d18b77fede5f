import { describe, expect, it } from 'vitest';
import type { Artifact, Workflow } from '../api/index.js';
import { artifactsToCollect, checkArtifactGC, dueStrategies, usesArtifactGC } from './artifact-gc.js';

const stored = (name: string, key: string, strategy?: string): Artifact =>
  ({ name, vendorAObject: { bucket: 'b', key }, ...(strategy ? { artifactGC: { strategy } } : {}) }) as Artifact;

function wf(
  spec: Partial<Workflow['spec']>,
  nodes: Record<string, { type: string; artifacts: Artifact[] }> = {},
  processed?: Record<string, boolean>,
): Workflow {
  return {
    apiVersion: 'workflows.plugflow.io/v1alpha1',
    kind: 'Workflow',
    metadata: { name: 'w', namespace: 'n' },
    spec: { entrypoint: 'main', templates: [], ...spec },
    status: {
      nodes: Object.fromEntries(
        Object.entries(nodes).map(([id, n]) => [
          id,
          { id, name: id, displayName: id, type: n.type, phase: 'Succeeded', outputs: { artifacts: n.artifacts } },
        ]),
      ),
      ...(processed ? { artifactGCStatus: { strategiesProcessed: processed } } : {}),
    },
  } as unknown as Workflow;
}

describe('which artifacts are collected, and when', () => {
  it('an artifact follows its own strategy, else the workflow’s, else Never', () => {
    const w = wf(
      { artifactGC: { strategy: 'OnWorkflowDeletion' } },
      {
        a: {
          type: 'Pod',
          artifacts: [stored('x', 'k/x.tgz'), stored('y', 'k/y.tgz', 'OnWorkflowCompletion'), stored('z', 'k/z.tgz', 'Never')],
        },
      },
    );
    expect(artifactsToCollect(w, 'OnWorkflowDeletion').map((a) => a.name)).toEqual(['x']);
    expect(artifactsToCollect(w, 'OnWorkflowCompletion').map((a) => a.name)).toEqual(['y']);
    expect(artifactsToCollect(wf({}, { a: { type: 'Pod', artifacts: [stored('x', 'k')] } }), 'OnWorkflowCompletion')).toEqual([]);
  });

  it('collects each stored object once, only from pod nodes, skipping artifacts that name no object', () => {
    const w = wf(
      { artifactGC: { strategy: 'OnWorkflowCompletion' } },
      {
        a: { type: 'Pod', artifacts: [stored('x', 'k/x.tgz'), { name: 'raw', raw: { data: 'hi' } } as Artifact] },
        b: { type: 'Pod', artifacts: [stored('again', 'k/x.tgz')] },
        s: { type: 'Steps', artifacts: [stored('passed', 'k/other.tgz')] },
      },
    );
    expect(artifactsToCollect(w, 'OnWorkflowCompletion').map((a) => a.name)).toEqual(['x']);
  });

  it('runs completion when finished or deleted, deletion only when deleted, and never twice', () => {
    const w = wf({});
    expect(dueStrategies(w, false, false)).toEqual([]);
    expect(dueStrategies(w, true, false)).toEqual(['OnWorkflowCompletion']);
    expect(dueStrategies(w, false, true)).toEqual(['OnWorkflowCompletion', 'OnWorkflowDeletion']);
    expect(dueStrategies(wf({}, {}, { OnWorkflowCompletion: true }), true, true)).toEqual(['OnWorkflowDeletion']);
  });

  it('a workflow carries the finalizer only when something may be collected', () => {
    const out = (strategy?: string) => ({
      name: 't',
      outputs: { artifacts: [{ name: 'o', path: '/o', ...(strategy ? { artifactGC: { strategy } } : {}) }] },
    });
    expect(usesArtifactGC({ entrypoint: 't', templates: [out()] } as Workflow['spec'])).toBe(false);
    expect(usesArtifactGC({ entrypoint: 't', artifactGC: { strategy: 'Never' }, templates: [out()] } as Workflow['spec'])).toBe(false);
    expect(usesArtifactGC({ entrypoint: 't', templates: [out('OnWorkflowDeletion')] } as Workflow['spec'])).toBe(true);
    // The workflow's strategy also covers artifacts from templates it references and main-logs.
    expect(
      usesArtifactGC({ entrypoint: 't', artifactGC: { strategy: 'OnWorkflowCompletion' }, templates: [out('Never')] } as Workflow['spec']),
    ).toBe(true);
    expect(usesArtifactGC({ entrypoint: 't', artifactGC: { strategy: 'OnWorkflowCompletion' }, templates: [] } as Workflow['spec'])).toBe(
      true,
    );
  });

  it('an unknown strategy is refused naming the field', () => {
    const errors: string[] = [];
    checkArtifactGC(
      {
        entrypoint: 't',
        artifactGC: { strategy: 'Sometimes' },
        templates: [{ name: 't', outputs: { artifacts: [{ name: 'o', path: '/o', artifactGC: { strategy: 'OnDelete' } }] } }],
      } as Workflow['spec'],
      (field, detail) => errors.push(`${field}: ${detail}`),
    );
    expect(errors).toEqual([
      'spec.artifactGC.strategy: must be one of OnWorkflowCompletion, OnWorkflowDeletion, Never, got "Sometimes"',
      'spec.templates[t].outputs.artifacts[o].artifactGC.strategy: must be one of OnWorkflowCompletion, OnWorkflowDeletion, Never, got "OnDelete"',
    ]);
  });
});
