import { describe, expect, it } from 'vitest';
import { parseJsonPath } from './resource-json-path.js';

const pod = {
  metadata: { name: 'p', uid: 'u-1', labels: { 'app.kubernetes.io/name': 'web' } },
  status: {
    succeeded: 3,
    conditions: [
      { type: 'Ready', status: 'True' },
      { type: 'Scheduled', status: 'False', n: 2 },
    ],
  },
  items: [{ metadata: { name: 'a' } }, { metadata: { name: 'b' } }],
};

const run = (t: string, o: unknown = pod) => parseJsonPath(t, 'f').evaluate(o);

describe("kubectl's JSONPath", () => {
  it('prints fields, as kubectl get -o jsonpath does', () => {
    expect(run('{.metadata.name}')).toBe('p');
    expect(run('{.status.succeeded}')).toBe('3');
    expect(run('name={.metadata.name} uid={.metadata.uid}')).toBe('name=p uid=u-1');
    expect(run("{.metadata.labels['app.kubernetes.io/name']}")).toBe('web');
    expect(run('{.metadata.labels}')).toBe('{"app.kubernetes.io/name":"web"}');
    expect(run('{$.metadata.name}')).toBe('p');
  });

  it('prints nothing for a missing field', () => {
    expect(run('{.metadata.nothing}')).toBe('');
    expect(run('{.metadata.constructor}')).toBe('');
  });

  it('indexes, slices, wildcards and recursive descent', () => {
    expect(run('{.status.conditions[0].type}')).toBe('Ready');
    expect(run('{.status.conditions[-1].type}')).toBe('Scheduled');
    expect(run('{.status.conditions[*].type}')).toBe('Ready Scheduled');
    expect(run('{.status.conditions[0:1].type}')).toBe('Ready');
    expect(run('{.items[*].metadata.name}')).toBe('a b');
    expect(run('{..name}')).toBe('p a b');
  });

  it('filters', () => {
    expect(run('{.status.conditions[?(@.type=="Ready")].status}')).toBe('True');
    expect(run("{.status.conditions[?(@.type!='Ready')].type}")).toBe('Scheduled');
    expect(run('{.status.conditions[?(@.n>1)].type}')).toBe('Scheduled');
    expect(run('{.status.conditions[?(@.n)].type}')).toBe('Scheduled');
  });

  it('ranges with literals', () => {
    expect(run('{range .items[*]}{.metadata.name}{"\\n"}{end}')).toBe('a\nb\n');
  });

  it('refuses what it cannot read, naming the field', () => {
    expect(() => parseJsonPath('{.a', 'f')).toThrow('f "{.a": a "{" is not closed');
    expect(() => parseJsonPath('{range .a}', 'f')).toThrow(/without "\{end\}"/);
    expect(() => parseJsonPath('{.a[?(x)]}', 'f')).toThrow(/a filter must start with "@"/);
    expect(() => parseJsonPath('{.a[1,2]}', 'f')).toThrow(/unsupported subscript/);
  });
});
