import { describe, expect, it } from 'vitest';
import { LABEL_COMPONENT, LABEL_NODE_ID, LABEL_PHASE } from '../api/index.js';
import type { CachedPod } from './caches.js';
import type { Workflow } from '../api/index.js';
import { isOwnEcho, podAddMatters, podChangeMatters, taskSetChangeMatters } from './triggers.js';

const pod = (status: CachedPod['status'], component = 'step', deleting = false): CachedPod => ({
  metadata: {
    name: 'p',
    namespace: 'ns',
    labels: { [LABEL_NODE_ID]: 'n', [LABEL_COMPONENT]: component },
    ...(deleting ? { deletionTimestamp: new Date() } : {}),
  },
  status,
});

describe('triggers', () => {
  it('ignores pod updates that change nothing the engine sees', () => {
    const a = pod({ phase: 'Running', podIP: '1.2.3.4' });
    const b = pod({ phase: 'Running', podIP: '1.2.3.4', conditions: [{ type: 'Ready', status: 'True' }] });
    expect(podChangeMatters(a, b)).toBe(false);
    expect(podChangeMatters(pod({ phase: 'Pending' }), b)).toBe(true);
    expect(podChangeMatters(a, pod({ phase: 'Running' }, 'step', true))).toBe(true);
  });

  it('ignores a freshly created pending pod but not one that is already stuck, running or an agent that failed', () => {
    expect(podAddMatters(pod({}))).toBe(false);
    expect(podAddMatters(pod({ phase: 'Pending' }))).toBe(false);
    expect(podAddMatters(pod({ phase: 'Running' }))).toBe(true);
    expect(
      podAddMatters(
        pod({
          phase: 'Pending',
          containerStatuses: [
            { name: 'main', image: 'x', imageID: '', ready: false, restartCount: 0, state: { waiting: { reason: 'ErrImagePull' } } },
          ],
        }),
      ),
    ).toBe(true);
    expect(podAddMatters(pod({ phase: 'Pending' }, 'agent'))).toBe(false);
    expect(podAddMatters(pod({ phase: 'Failed' }, 'agent'))).toBe(true);
  });

  it('reacts to an agent pod whose main container died while plugin sidecars keep it Running', () => {
    const running = (main: { exitCode: number } | undefined) =>
      pod(
        {
          phase: 'Running',
          containerStatuses: [
            {
              name: 'main',
              image: 'x',
              imageID: '',
              ready: !main,
              restartCount: 0,
              state: main ? { terminated: { exitCode: main.exitCode } } : { running: {} },
            },
            { name: 'hello', image: 'x', imageID: '', ready: true, restartCount: 0, state: { running: {} } },
          ],
        },
        'agent',
      );
    expect(podChangeMatters(running(undefined), running({ exitCode: 1 }))).toBe(true);
    expect(podChangeMatters(running(undefined), running({ exitCode: 0 }))).toBe(false);
  });

  it('reacts to new or changed TaskSet results only, not to spec writes or pruned results', () => {
    const base = { metadata: { name: 'w' }, spec: { tasks: {} }, status: { nodes: {} } };
    expect(taskSetChangeMatters(base, { ...base, spec: { tasks: { a: { name: 't' } } } })).toBe(false);
    expect(taskSetChangeMatters(base, { ...base, status: { nodes: { a: { phase: 'Running' } } } })).toBe(true);
    const two = { ...base, status: { nodes: { a: { phase: 'Succeeded' as const }, b: { phase: 'Running' as const } } } };
    expect(taskSetChangeMatters(two, { ...base, status: { nodes: { b: { phase: 'Running' } } } })).toBe(false); // pruned
    expect(taskSetChangeMatters(two, { ...base, status: { nodes: { b: { phase: 'Succeeded' } } } })).toBe(true);
  });

  it('recognises the echo of our own status and label writes by content, and nothing else', () => {
    const old: Workflow = {
      metadata: { name: 'w', resourceVersion: '1', labels: { team: 'a' } },
      spec: { entrypoint: 'main' },
      status: { phase: 'Running' },
    };
    const written = { phase: 'Running' as const, progress: '1/2' };
    const echo: Workflow = {
      ...old,
      metadata: { ...old.metadata, resourceVersion: '2', labels: { team: 'a', [LABEL_PHASE]: 'Running' } },
      status: written,
    };
    expect(isOwnEcho(old, echo, written)).toBe(true);
    expect(isOwnEcho(old, echo, undefined)).toBe(false);
    expect(isOwnEcho(old, { ...echo, status: { phase: 'Running', progress: '2/2' } }, written)).toBe(false); // someone else's status
    expect(isOwnEcho(old, { ...echo, spec: { entrypoint: 'main', suspend: true } }, written)).toBe(false); // a spec change
    expect(isOwnEcho(old, { ...echo, metadata: { ...echo.metadata, annotations: { x: 'y' } } }, written)).toBe(false);
    // Large nodes: the echo carries the string they were stored as, the written status the one it was computed from.
    const nodes = { n1: { id: 'n1', name: 'w', displayName: 'w', type: 'Pod' as const, phase: 'Running' as const } };
    const big = { ...written, nodes, compressedNodes: 'old' };
    expect(isOwnEcho(old, { ...echo, status: { ...written, nodes, compressedNodes: 'new' } }, big)).toBe(true);
    expect(isOwnEcho(old, { ...echo, status: { ...written, nodes: {}, compressedNodes: 'new' } }, big)).toBe(false);
  });
});
