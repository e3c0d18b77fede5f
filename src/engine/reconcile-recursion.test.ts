import { describe, expect, it } from 'vitest';
import type { Template, WorkflowSpec } from '../api/index.js';
import { isFinal } from './node-phase.js';
import { MAX_TEMPLATE_DEPTH } from './execute-template.js';
import { World } from './test-world.js';

const echo: Template = { name: 'echo', container: { image: 'alpine', command: ['echo', 'hi'] } };

/** t0 → t1 → … → t<n-1>, the last one a container: n templates nested n deep. */
function chain(n: number): WorkflowSpec {
  const templates: Template[] = Array.from({ length: n }, (_, i) =>
    i < n - 1 ? { name: `t${i}`, steps: [[{ name: 's', template: `t${i + 1}` }]] } : { ...echo, name: `t${i}` },
  );
  return { entrypoint: 't0', templates };
}

function expectEndedAtOnce(w: World): void {
  expect(w.status.phase).toBe('Failed');
  expect(w.status.finishedAt).toBeDefined();
  expect(Object.values(w.status.nodes ?? {}).every((n) => isFinal(n.phase))).toBe(true);
  expect(w.lastActions.filter((a) => a.kind === 'createPod' || a.kind === 'writeTask' || a.kind === 'requeueAt')).toEqual([]);
}

describe('recursion depth', () => {
  it(`fails self-recursive steps at once, naming the template nested ${MAX_TEMPLATE_DEPTH + 1} deep`, () => {
    const w = new World({ entrypoint: 'loop', templates: [{ name: 'loop', steps: [[{ name: 'again', template: 'loop' }]] }] });
    const t0 = performance.now();
    w.reconcile();
    expect(performance.now() - t0).toBeLessThan(2000);
    expect(w.status.message).toBe(
      `maximum recursion depth exceeded: template "loop" nested ${MAX_TEMPLATE_DEPTH + 1} deep (templates may nest at most ${MAX_TEMPLATE_DEPTH} deep)`,
    );
    expectEndedAtOnce(w);
    expect(w.node('wf')).toMatchObject({ phase: 'Error', message: w.status.message });
    // Finished is finished: the next reconcile changes nothing.
    const before = structuredClone(w.status);
    w.reconcile();
    expect(w.status).toEqual(before);
  });

  it('fails mutually recursive DAGs the same way', () => {
    const w = new World({
      entrypoint: 'a',
      templates: [
        { name: 'a', dag: { tasks: [{ name: 't', template: 'b' }] } },
        { name: 'b', dag: { tasks: [{ name: 't', template: 'a' }] } },
      ],
    });
    w.reconcile();
    expect(w.status.message).toMatch(/^maximum recursion depth exceeded: template "a" nested 101 deep/);
    expectEndedAtOnce(w);
  });

  it('fails a recursive exit handler', () => {
    const w = new World({
      entrypoint: 'echo',
      onExit: 'loop',
      templates: [echo, { name: 'loop', dag: { tasks: [{ name: 'x', template: 'loop' }] } }],
    });
    w.reconcile();
    w.succeedPod('wf');
    w.reconcile();
    expect(w.status.message).toMatch(/^maximum recursion depth exceeded: template "loop" nested 101 deep/);
    expectEndedAtOnce(w);
    expect(w.node('wf').phase).toBe('Succeeded');
  });

  it(`runs a chain exactly ${MAX_TEMPLATE_DEPTH} deep, and fails one deeper`, () => {
    const ok = new World(chain(MAX_TEMPLATE_DEPTH));
    ok.reconcile();
    expect(ok.status.phase).toBe('Running');
    expect(ok.runningPods()).toEqual(['s']);
    ok.succeedAll();
    ok.reconcile();
    expect(ok.status.phase).toBe('Succeeded');

    const deep = new World(chain(MAX_TEMPLATE_DEPTH + 1));
    deep.reconcile();
    expect(deep.status.message).toMatch(/^maximum recursion depth exceeded: template "t100" nested 101 deep/);
    expectEndedAtOnce(deep);
    expect(deep.created.size).toBe(0);
  });

  it('stops what already runs when a later branch recurses: running nodes end in Error, their pods are deleted', () => {
    const w = new World({
      entrypoint: 'd',
      templates: [
        {
          name: 'd',
          dag: {
            tasks: [
              { name: 'slow', template: 'echo' },
              { name: 'gate', template: 'echo' },
              { name: 'rec', template: 'loop', depends: 'gate' },
            ],
          },
        },
        echo,
        { name: 'loop', steps: [[{ name: 'again', template: 'loop' }]] },
      ],
    });
    w.reconcile();
    w.startPod('slow');
    w.succeedPod('gate');
    const r = w.reconcile();
    expectEndedAtOnce(w);
    expect(w.node('slow')).toMatchObject({ phase: 'Error', message: w.status.message });
    expect(w.node('gate').phase).toBe('Succeeded');
    expect(r.actions.map((a) => a.kind)).toEqual(['deletePod']);
    expect(w.runningPods()).toEqual([]);
  });
});
