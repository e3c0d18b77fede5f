import { describe, expect, it } from 'vitest';
import type { Template, WorkflowSpec } from '../api/index.js';
import { memoCacheNames } from './memoize.js';
import { World } from './test-world.js';
import { validateWorkflow } from './validate.js';

const memoized: Template = {
  name: 'square',
  inputs: { parameters: [{ name: 'n' }] },
  memoize: { key: 'square-{{inputs.parameters.n}}', maxAge: '1h', cache: { configMap: { name: 'squares', key: 'unused' } } },
  outputs: { parameters: [{ name: 'sq', valueFrom: { path: '/tmp/sq' } }] },
  container: { image: 'alpine', command: ['sh', '-c', 'echo $(({{inputs.parameters.n}}*{{inputs.parameters.n}})) > /tmp/sq'] },
};

function twice(n: string): WorkflowSpec {
  return {
    entrypoint: 'main',
    templates: [
      {
        name: 'main',
        steps: [
          [{ name: 'first', template: 'square', arguments: { parameters: [{ name: 'n', value: n }] } }],
          [{ name: 'again', template: 'square', arguments: { parameters: [{ name: 'n', value: n }] } }],
        ],
      },
      memoized,
    ],
  };
}

function emptyCache(w: World): void {
  w.memoCaches = { squares: { entries: {} } };
}

describe('memoize', () => {
  it('runs a step on a miss, stores its outputs when it succeeds, and answers the same key from the cache without a pod', () => {
    const w = new World(twice('3'));
    emptyCache(w);
    w.reconcile();
    expect(w.node('first')).toMatchObject({ phase: 'Pending', memoizationStatus: { hit: false, key: 'square-3', cacheName: 'squares' } });
    w.succeedPod('first', { parameters: [{ name: 'sq', value: '9' }] });
    w.advance(5);
    w.reconcile();
    expect(w.memoSaves).toEqual([{ cacheName: 'squares', key: 'square-3', nodeID: w.node('first').id }]);
    const entry = (w.memoCaches!.squares as { entries: Record<string, { outputs: unknown; creationTimestamp: string }> }).entries[
      'square-3'
    ]!;
    expect(entry.outputs).toEqual({ parameters: [{ name: 'sq', value: '9' }], exitCode: '0' });
    expect(entry.creationTimestamp).toBe(w.node('first').finishedAt);
    // "again" has the same key: Succeeded at once with the stored outputs, no pod.
    expect(w.node('again')).toMatchObject({
      phase: 'Succeeded',
      memoizationStatus: { hit: true, key: 'square-3', cacheName: 'squares' },
      outputs: { parameters: [{ name: 'sq', value: '9' }] },
    });
    expect([...w.created.values()].map((c) => c.nodeId)).toEqual([w.node('first').id]);
    expect(w.status.phase).toBe('Succeeded');
    // Seen in the cache: not written again.
    w.reconcile();
    expect(w.lastActions.filter((a) => a.kind === 'saveMemo')).toEqual([]);
  });

  it('asks again to save until the cache is seen holding the entry (a restart between status and cache loses nothing)', () => {
    const w = new World({ entrypoint: 'square', arguments: { parameters: [{ name: 'n', value: '2' }] }, templates: [memoized] });
    emptyCache(w);
    w.reconcile();
    w.succeedPod('wf', { parameters: [{ name: 'sq', value: '4' }] });
    // The cache the controller sees stays empty (its write was lost).
    w.memoCaches = { squares: { entries: {} } };
    const first = w.reconcile();
    expect(first.status.phase).toBe('Succeeded');
    w.memoCaches = { squares: { entries: {} } };
    const second = w.reconcile();
    expect(second.actions.filter((a) => a.kind === 'saveMemo')).toHaveLength(1);
  });

  it('runs again once the entry is older than maxAge, and does not overwrite a newer entry', () => {
    const w = new World(twice('4'));
    w.memoCaches = {
      squares: {
        entries: {
          'square-4': {
            nodeID: 'old',
            outputs: { parameters: [{ name: 'sq', value: 'stale' }] },
            creationTimestamp: '2023-12-31T22:00:00.000Z',
            lastHitTimestamp: '2023-12-31T22:00:00.000Z',
          },
        },
      },
    };
    w.reconcile();
    expect(w.node('first')).toMatchObject({ phase: 'Pending', memoizationStatus: { hit: false } });
    w.succeedPod('first', { parameters: [{ name: 'sq', value: '16' }] });
    w.reconcile();
    expect(w.node('again')).toMatchObject({ phase: 'Succeeded', outputs: { parameters: [{ name: 'sq', value: '16' }] } });

    const newer = new World({ entrypoint: 'square', arguments: { parameters: [{ name: 'n', value: '5' }] }, templates: [memoized] });
    newer.memoCaches = { squares: { entries: {} } };
    newer.reconcile();
    newer.succeedPod('wf', { parameters: [{ name: 'sq', value: '25' }] });
    newer.memoCaches.squares = {
      entries: {
        'square-5': {
          nodeID: 'other-workflow',
          outputs: {},
          creationTimestamp: '2024-01-01T00:10:00.000Z',
          lastHitTimestamp: '2024-01-01T00:10:00.000Z',
        },
      },
    };
    newer.reconcile();
    expect(newer.memoSaves).toEqual([]);
  });

  it('does not store a failed step, and memoizes steps templates as a whole', () => {
    const w = new World(twice('6'));
    emptyCache(w);
    w.reconcile();
    w.failPod('first');
    w.reconcile();
    expect(w.status.phase).toBe('Failed');
    expect(w.memoSaves).toEqual([]);

    const outer = new World({
      entrypoint: 'group',
      templates: [
        {
          name: 'group',
          memoize: { key: 'group', cache: { configMap: { name: 'squares' } } },
          steps: [[{ name: 'inner', template: 'echo' }]],
        },
        { name: 'echo', container: { image: 'alpine', command: ['true'] } },
      ],
    });
    outer.memoCaches = {
      squares: { entries: { group: { nodeID: 'x', outputs: {}, creationTimestamp: '2023-01-01T00:00:00Z', lastHitTimestamp: '' } } },
    };
    outer.reconcile();
    expect(outer.status.phase).toBe('Succeeded');
    expect(outer.node('wf')).toMatchObject({ type: 'Steps', memoizationStatus: { hit: true, key: 'group' } });
    expect(outer.created.size).toBe(0);
  });

  it('fails the node naming the field when the key cannot be a ConfigMap key or the cache cannot be used', () => {
    const w = new World(twice('a b'));
    emptyCache(w);
    w.reconcile();
    expect(w.node('first')).toMatchObject({
      phase: 'Error',
      message: `spec.templates[square].memoize.key: "square-a b" cannot key the cache: a ConfigMap key is 1 to 253 letters, digits, '-', '_' or '.'`,
    });
    const refused = new World(twice('1'));
    refused.memoCaches = { squares: { problem: 'ConfigMap ns/squares exists and is not a cache: it lacks the label' } };
    refused.reconcile();
    expect(refused.node('first')).toMatchObject({
      phase: 'Error',
      message: 'spec.templates[square].memoize.cache.configMap.name: ConfigMap ns/squares exists and is not a cache: it lacks the label',
    });
    expect(refused.created.size).toBe(0);
  });

  it('is validated naming the field', () => {
    const bad = new World({
      entrypoint: 'x',
      templates: [{ name: 'x', memoize: { key: '', maxAge: '1 day', cache: { configMap: { name: 'Not_A_Name' } } }, suspend: {} }],
    });
    const messages = validateWorkflow(bad.workflow).map((e) => e.message);
    expect(messages).toEqual([
      'spec.templates[x].memoize.key is required: the cache entry is stored under it',
      `spec.templates[x].memoize.cache.configMap.name "Not_A_Name" is not a ConfigMap name (lower case letters, digits, '-' and '.')`,
      expect.stringMatching(/^spec\.templates\[x\]\.memoize\.maxAge /),
    ]);
  });

  it('names the caches a set of templates uses, inline ones included', () => {
    expect(
      memoCacheNames([
        memoized,
        {
          name: 'main',
          steps: [[{ name: 'i', inline: { name: 'i', memoize: { key: 'k', cache: { configMap: { name: 'inner' } } }, suspend: {} } }]],
        },
      ]),
    ).toEqual(['inner', 'squares']);
  });
});
