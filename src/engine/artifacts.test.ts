import { describe, expect, it } from 'vitest';
import type { Artifact } from '../api/index.js';
import { artifactVariable, bindInputArtifacts, collectOutputArtifacts, parseArtifactRef, resolveFromExpressions } from './artifacts.js';
import { valueSource } from './expressions.js';
import { World } from './test-world.js';

const stored: Artifact = {
  name: 'out',
  path: '/producer/only',
  vendorAObject: { bucket: 'b', key: 'wf/pod/out.tgz', endpoint: 'minio:9000', accessKeySecret: { name: 's', key: 'a' } },
};

describe('binding input artifacts', () => {
  it("takes the location from the argument's from record and the path and mode from the declaration", () => {
    const bound = bindInputArtifacts(
      [{ name: 'in', path: '/in', mode: 0o600 }],
      { artifacts: [{ name: 'in', from: artifactVariable(stored) }] },
      'spec.templates[t]',
    );
    expect(bound).toEqual({ ok: true, artifacts: [{ name: 'in', path: '/in', mode: 0o600, vendorAObject: stored.vendorAObject }] });
  });

  it('reads a path after the reference as a subPath inside the artifact (the peer\'s from: "{{…}}/dir/file")', () => {
    const bound = bindInputArtifacts(
      [{ name: 'in', path: '/in' }],
      { artifacts: [{ name: 'in', from: `${artifactVariable(stored)}/dir/file.txt` }] },
      'w',
    );
    expect(bound).toEqual({
      ok: true,
      artifacts: [{ name: 'in', path: '/in', subPath: 'dir/file.txt', vendorAObject: stored.vendorAObject }],
    });
  });

  it("uses the declaration's own location (raw, http) when no argument is given, and leaves out a missing optional input", () => {
    const bound = bindInputArtifacts(
      [
        { name: 'r', path: '/r', raw: { data: 'x' } },
        { name: 'o', path: '/o', optional: true },
      ],
      undefined,
      'w',
    );
    expect(bound).toEqual({ ok: true, artifacts: [{ name: 'r', path: '/r', raw: { data: 'x' } }] });
  });

  it('fails naming the input when nothing is supplied, and when from is not an artifact', () => {
    expect(bindInputArtifacts([{ name: 'in', path: '/in' }], undefined, 'spec.templates[t]')).toEqual({
      ok: false,
      error: expect.stringContaining('spec.templates[t].inputs.artifacts[in]: no artifact supplied'),
    });
    const bad = bindInputArtifacts([{ name: 'in', path: '/in' }], { artifacts: [{ name: 'in', from: 'hello' }] }, 'w');
    expect(bad).toEqual({
      ok: false,
      error: expect.stringContaining('w.inputs.artifacts[in] argument from: expected a reference to an artifact'),
    });
  });

  it('never lets a from record reach an object prototype', () => {
    expect(() => parseArtifactRef('{"__proto__":{"x":1},"raw":{"data":"a"}}', 'f')).toThrow(/__proto__/);
  });
});

describe('output artifacts', () => {
  it('keeps what the pod uploaded, with globalName; skips an optional missing one; fails a required missing one', () => {
    const values = valueSource({});
    expect(
      collectOutputArtifacts(
        [
          { name: 'out', path: '/tmp/o', globalName: 'g' },
          { name: 'maybe', path: '/tmp/m', optional: true },
        ],
        [stored],
        values,
        'w',
      ),
    ).toEqual({ ok: true, artifacts: [{ name: 'out', path: '/tmp/o', globalName: 'g', vendorAObject: stored.vendorAObject }] });
    expect(collectOutputArtifacts([{ name: 'x', path: '/x' }], [], values, 'w')).toEqual({
      ok: false,
      error: 'w.outputs.artifacts[x]: the step produced no such artifact',
    });
  });

  it("keeps reported artifacts nobody declared when they have a location (a plugin's reply, main-logs)", () => {
    const reply: Artifact[] = [{ ...stored, name: 'report' }, { name: 'no-location' }];
    expect(collectOutputArtifacts(undefined, reply, valueSource({}), 'w')).toEqual({ ok: true, artifacts: [reply[0]] });
  });

  it('takes a steps or DAG template output from a step by from and fromExpression', () => {
    const values = valueSource({ 'steps.a.outputs.artifacts.out': artifactVariable(stored), 'steps.a.status': 'Succeeded' });
    const got = collectOutputArtifacts(
      [
        { name: 'one', from: '{{steps.a.outputs.artifacts.out}}' },
        { name: 'two', fromExpression: "steps.a.status == 'Succeeded' ? steps.a.outputs.artifacts.out : ''" },
      ],
      undefined,
      values,
      'w',
    );
    expect(got).toEqual({
      ok: true,
      artifacts: [
        { name: 'one', vendorAObject: stored.vendorAObject },
        { name: 'two', vendorAObject: stored.vendorAObject },
      ],
    });
  });

  it('evaluates fromExpression of arguments into from', () => {
    const values = valueSource({ 'tasks.a.outputs.artifacts.out': artifactVariable(stored) });
    const args = resolveFromExpressions({ artifacts: [{ name: 'in', fromExpression: 'tasks.a.outputs.artifacts.out' }] }, values, 'w');
    expect(args.artifacts?.[0]).toEqual({ name: 'in', from: artifactVariable(stored) });
  });
});

describe('a steps or DAG output passes on only what a step produced (the server downloads it)', () => {
  const internal = JSON.stringify({ vendorAObject: { bucket: 'x', key: 'y', endpoint: 'internal-svc.kube-system:80', insecure: true } });

  it('refuses a literal location record in from, naming the field', () => {
    const got = collectOutputArtifacts([{ name: 'leak', from: internal }], undefined, valueSource({}), 'spec.templates[main]', () => false);
    expect(got).toEqual({
      ok: false,
      error:
        'spec.templates[main].outputs.artifacts[leak]: from names a location no step of this workflow produced; an output passes on an artifact a step made, e.g. "{{steps.NAME.outputs.artifacts.ART}}"',
    });
  });

  for (const shape of ['steps', 'dag'] as const) {
    it(`a ${shape} workflow: a real artifact goes through, a literal location errors the node`, () => {
      const call =
        shape === 'steps' ? { steps: [[{ name: 'make', template: 'make' }]] } : { dag: { tasks: [{ name: 'make', template: 'make' }] } };
      const ref = `{{${shape === 'steps' ? 'steps' : 'tasks'}.make.outputs.artifacts.out}}`;
      const world = (from: string) =>
        new World({
          entrypoint: 'main',
          templates: [
            { name: 'main', ...call, outputs: { artifacts: [{ name: 'passed', from }] } },
            { name: 'make', outputs: { artifacts: [{ name: 'out', path: '/o' }] }, container: { image: 'busybox', command: ['true'] } },
          ],
        } as never);
      for (const [from, phase] of [
        [ref, 'Succeeded'],
        [internal, 'Error'],
      ] as const) {
        const w = world(from);
        w.reconcile();
        w.succeedPod('make', { artifacts: [stored] });
        const done = w.reconcile();
        const main = done.status.nodes?.wf;
        expect(main?.phase, main?.message).toBe(phase);
        if (phase === 'Error') expect(main?.message).toContain('from names a location no step of this workflow produced');
        else expect(main?.outputs?.artifacts).toEqual([{ name: 'passed', vendorAObject: stored.vendorAObject }]);
      }
    });
  }
});

describe('a template whose only inputs are artifacts', () => {
  it('keeps them on its node, so a later reconcile renders {{inputs.artifacts.NAME.path}} again', () => {
    const w = new World({
      entrypoint: 'count',
      templates: [
        {
          name: 'count',
          inputs: { artifacts: [{ name: 'words', path: '/in/words', raw: { data: 'a\nb\n' } }] },
          outputs: { artifacts: [{ name: 'total', path: '/out/total' }] },
          container: {
            image: 'busybox',
            command: ['sh', '-c'],
            args: ['wc -l < {{inputs.artifacts.words.path}} > {{outputs.artifacts.total.path}}'],
          },
        },
      ],
    });
    w.reconcile();
    const again = w.reconcile();
    expect(again.status.nodes?.wf?.phase).toBe('Pending');
    expect(again.status.nodes?.wf?.inputs?.artifacts).toEqual([{ name: 'words', path: '/in/words', raw: { data: 'a\nb\n' } }]);
  });
});
