import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readWorkflowFile } from './rest.js';

describe('readWorkflowFile (plugflow submit FILE)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'plugflow-submit-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const file = (name: string, text: string): string => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };

  it('reads what kubectl reads: a multi-line quoted scalar in a flow sequence closed at the key, a duplicate key, 1.1 booleans', () => {
    const path = file(
      'wf.yaml',
      [
        'apiVersion: plugflow.io/v1alpha1',
        'kind: Workflow',
        'metadata: {generateName: flow-}',
        'spec:',
        '  entrypoint: main',
        '  entrypoint: main2',
        '  templates:',
        '  - name: main2',
        '    container:',
        '      image: alpine',
        '      command: [sh, -c]',
        '      args: ["',
        '        echo a &&',
        '        echo b',
        '      "]',
        '      securityContext: {runAsNonRoot: yes}',
        '',
      ].join('\n'),
    );
    const [wf] = readWorkflowFile(path);
    expect(wf!.spec.entrypoint).toBe('main2');
    const container = wf!.spec.templates![0]!.container as { args: string[]; securityContext: { runAsNonRoot: unknown } };
    expect(container.args).toEqual([' echo a && echo b ']);
    expect(container.securityContext.runAsNonRoot).toBe(true);
  });

  it('reads several documents and names the file and line of a syntax error', () => {
    const two = file('two.yaml', 'kind: Workflow\nmetadata: {name: a}\n---\n...\n---\nkind: Workflow\nmetadata: {name: b}\n');
    expect(readWorkflowFile(two).map((w) => w.metadata.name)).toEqual(['a', 'b']);
    expect(() => readWorkflowFile(file('bad.yaml', 'kind: Workflow\nspec: [1,\n'))).toThrow(/bad\.yaml: line \d+, column \d+: /);
    expect(() => readWorkflowFile(file('cm.yaml', 'kind: ConfigMap\n'))).toThrow(/expected kind Workflow, got ConfigMap/);
  });
});
