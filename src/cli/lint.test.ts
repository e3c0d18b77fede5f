import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { lintFiles } from './lint.js';

const ROOT = resolve(import.meta.dirname, '..', '..');
const dir = mkdtempSync(join(tmpdir(), 'plugflow-lint-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const file = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};

describe('plugflow lint (offline: only the files)', () => {
  it('finds nothing wrong with the examples', async () => {
    const files = readdirSync(join(ROOT, 'examples/workflows')).map((f) => join(ROOT, 'examples/workflows', f));
    const r = await lintFiles(files, { offline: true });
    expect(r.problems).toEqual([]);
    expect(r.checked).toBeGreaterThanOrEqual(files.length);
  });

  it('names the file, the object and the field of every problem', async () => {
    const bad = file(
      'bad.yaml',
      [
        'kind: Workflow',
        'metadata: {generateName: bad-}',
        'spec:',
        '  entrypoint: nope',
        '  memoize: {}',
        '  templates:',
        '  - name: main',
        '    steps: [[{name: a, templateRef: {name: elsewhere, template: x}}]]',
      ].join('\n'),
    );
    const r = await lintFiles([bad], { offline: true });
    expect(r.problems.every((p) => p.startsWith(`${bad}: Workflow bad-*: `))).toBe(true);
    expect(r.problems.join('\n')).toContain('spec.entrypoint names template "nope"');
    expect(r.problems.join('\n')).toContain('templateRef WorkflowTemplate "elsewhere" not found');
  });

  it('uses a WorkflowTemplate given in the same files for the references to it', async () => {
    const both = file(
      'both.yaml',
      [
        'kind: WorkflowTemplate',
        'metadata: {name: greet}',
        'spec:',
        '  templates: [{name: hello, container: {image: busybox, command: [echo, hi]}}]',
        '---',
        'kind: Workflow',
        'metadata: {generateName: uses-}',
        'spec:',
        '  entrypoint: main',
        '  templates: [{name: main, steps: [[{name: a, templateRef: {name: greet, template: hello}}]]}]',
      ].join('\n'),
    );
    expect(await lintFiles([both], { offline: true })).toEqual({ problems: [], checked: 2, skipped: [], warnings: [] });
    const wrong = file(
      'wrong.yaml',
      (await import('node:fs')).readFileSync(both, 'utf8').replace('template: hello}', 'template: nothere}'),
    );
    expect((await lintFiles([wrong], { offline: true })).problems.join('\n')).toContain('nothere');
  });

  it('says which files it could not read, and skips documents that are not workflows', async () => {
    const other = file('cm.yaml', 'kind: ConfigMap\nmetadata: {name: x}\n');
    const r = await lintFiles([join(dir, 'missing.yaml'), other], { offline: true });
    expect(r.problems).toHaveLength(1);
    expect(r.problems[0]).toMatch(/missing\.yaml: .*(ENOENT|no such file)/);
    expect(r.skipped).toEqual([`${other}: ConfigMap x`]);
  });

  it('checks a CronWorkflow: its schedules, then its workflowSpec as the run it makes', async () => {
    const good = file(
      'cron.yaml',
      'apiVersion: plugflow.io/v1alpha1\nkind: CronWorkflow\nmetadata: {name: nightly}\nspec:\n  schedule: "0 2 * * *"\n  timezone: Europe/Paris\n  workflowSpec:\n    entrypoint: hello\n    templates:\n      - {name: hello, container: {image: alpine:3, command: [echo, hi]}}\n',
    );
    expect(await lintFiles([good], { offline: true })).toEqual({ problems: [], checked: 1, skipped: [], warnings: [] });
    const bad = file(
      'bad-cron.yaml',
      'apiVersion: plugflow.io/v1alpha1\nkind: CronWorkflow\nmetadata: {name: broken}\nspec:\n  schedule: "61 * * * *"\n  concurrencyPolicy: Sometimes\n  workflowSpec:\n    entrypoint: nothere\n    templates:\n      - {name: hello, container: {image: alpine:3, command: [echo, hi]}}\n',
    );
    const problems = (await lintFiles([bad], { offline: true })).problems;
    expect(problems).toHaveLength(3);
    expect(problems[0]).toMatch(new RegExp(`^${bad.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: CronWorkflow broken: spec.schedule`));
    expect(problems[1]).toContain('CronWorkflow broken: spec.concurrencyPolicy: "Sometimes" is not one of Allow, Forbid, Replace');
    expect(problems[2]).toContain('CronWorkflow broken: spec.workflowSpec.entrypoint names template "nothere", which does not exist');
  });
});

describe('keys kubectl reads as booleans', () => {
  it('lint warns naming the line and what the key became; the file still means what kubectl reads', async () => {
    const f = file(
      'bool-keys.yaml',
      [
        'kind: Workflow',
        'metadata: {generateName: items-}',
        'spec:',
        '  entrypoint: main',
        '  templates:',
        '  - name: main',
        '    steps:',
        '    - - name: each',
        '        template: echo',
        '        arguments: {parameters: [{name: v, value: "{{item.n}}"}]}',
        '        withItems: [{n: 1}]',
        '  - name: echo',
        '    inputs: {parameters: [{name: v}]}',
        '    container: {image: alpine, command: [echo, "{{inputs.parameters.v}}"]}',
        '',
      ].join('\n'),
    );
    const r = await lintFiles([f], { offline: true });
    expect(r.warnings).toEqual([
      `${f}: line 11: the key n is a YAML 1.1 boolean, as kubectl reads it, so it becomes "false"; quote it ("n") to keep the name`,
    ]);
  });
});
