import { describe, expect, it } from 'vitest';
import type { Workflow } from '../api/index.js';
import { withCreator, CREATOR_ANNOTATION } from './creator.js';
import { OperationRefused } from './errors.js';
import { sourceOf, storedInputArtifact } from './input-artifacts.js';

const wf = {
  metadata: { name: 'wf', namespace: 'ns' },
  spec: {},
  status: {
    nodes: {
      n1: {
        id: 'n1',
        name: 'wf[0].use',
        displayName: 'use',
        type: 'Pod',
        phase: 'Succeeded',
        inputs: {
          artifacts: [
            { name: 'stored', path: '/in/a', vendorAObject: { endpoint: 'minio:9000', bucket: 'b', key: 'wf/a.tgz' } },
            { name: 'web', path: '/in/b', http: { url: 'http://169.254.169.254/latest' } },
            { name: 'repo', path: '/src', git: { repo: 'https://example.com/r.git' } },
            { name: 'text', path: '/in/c', raw: { data: 'hello' } },
          ],
        },
      },
    },
  },
} as unknown as Workflow;

describe('input artifacts', () => {
  it('says where each comes from, and only those in a store are for the server to download', () => {
    const [stored, web, repo, text] = wf.status!.nodes!.n1!.inputs!.artifacts!;
    expect(sourceOf(stored!)).toEqual({ from: 'object store b/wf/a.tgz', stored: true });
    expect(sourceOf(web!)).toEqual({ from: 'http http://169.254.169.254/latest', stored: false });
    expect(sourceOf(repo!).stored).toBe(false);
    expect(sourceOf(text!).stored).toBe(false);
  });

  it('refuses to download an input the step fetches itself, or raw data, saying why; finds a stored one by node id, name or display name', () => {
    expect(storedInputArtifact(wf, 'n1', 'stored').name).toBe('stored');
    expect(storedInputArtifact(wf, 'use', 'stored').name).toBe('stored');
    expect(() => storedInputArtifact(wf, 'n1', 'web')).toThrow(/the step fetches it itself \(http http:\/\/169\.254/);
    expect(() => storedInputArtifact(wf, 'n1', 'text')).toThrow(/its data is written in the workflow itself/);
    expect(() => storedInputArtifact(wf, 'n1', 'nope')).toThrow(/no input artifact "nope" on node "n1"/);
    expect(() => storedInputArtifact(wf, 'n9', 'stored')).toThrow(OperationRefused);
    try {
      storedInputArtifact(wf, 'n1', 'repo');
    } catch (err) {
      expect((err as OperationRefused).reason).toBe('forbidden');
    }
  });
});

describe('the creator annotation', () => {
  it('is the given user, never what the client wrote; removed when nobody is known', () => {
    const forged = { name: 'x', annotations: { [CREATOR_ANNOTATION]: 'mallory', keep: 'me' } };
    expect(withCreator(forged, 'alice').annotations).toEqual({ [CREATOR_ANNOTATION]: 'alice', keep: 'me' });
    expect(withCreator(forged, undefined).annotations).toEqual({ keep: 'me' });
    expect(withCreator({ name: 'x', annotations: { [CREATOR_ANNOTATION]: 'mallory' } }, undefined)).toEqual({ name: 'x' });
  });
});
