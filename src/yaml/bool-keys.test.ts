import { describe, expect, it } from 'vitest';
import { booleanKeys } from './bool-keys.js';
import { readYamlDocument } from './kube-yaml.js';

describe('keys YAML 1.1 reads as booleans', () => {
  it('names the line and what the key became, and the file still reads as kubectl reads it', () => {
    const text = 'spec:\n  templates:\n  - name: main\n    steps:\n    - - name: a\n        withItems: [{n: 1}, {y: 2}]\n    on: push\n';
    expect(booleanKeys(text).map((w) => w.message)).toEqual([
      'line 6: the key n is a YAML 1.1 boolean, as kubectl reads it, so it becomes "false"; quote it ("n") to keep the name',
      'line 6: the key y is a YAML 1.1 boolean, as kubectl reads it, so it becomes "true"; quote it ("y") to keep the name',
      'line 7: the key on is a YAML 1.1 boolean, as kubectl reads it, so it becomes "true"; quote it ("on") to keep the name',
    ]);
    expect(readYamlDocument(text, 't')).toMatchObject({
      spec: { templates: [{ true: 'push', steps: [[{ withItems: [{ false: 1 }, { true: 2 }] }]] }] },
    });
  });

  it('says nothing of booleans as values, quoted keys, true/false keys, or words inside block text', () => {
    const text = 'a: yes\n"n": 1\ntrue: x\nscript: |\n  on: push\n  n: 1\nlist: [no, off]\n';
    expect(booleanKeys(text)).toEqual([]);
  });
});
