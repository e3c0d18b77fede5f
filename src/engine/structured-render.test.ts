import { describe, expect, it } from 'vitest';
import { renderStructuredText } from './structured-render.js';

/** A leaf renderer that substitutes `{{v}}` with `value` (the engine's renderer in miniature). */
const withValue = (value: string) => (text: string) => text.replaceAll('{{v}}', value);

const HOSTILE = [
  '"}}], "hostPID": true, "x": [{"a": "',
  '1Gi"}}]}, "hostNetwork": true, "y": {"z": "',
  '1Gi\nhostPID: true\n',
  'a: b',
  '1Gi\n---\nhostPID: true',
  "' ]}  , hostIPC: true, q: ['",
  '{{v}}',
  '}}}]]]',
  '\\"',
  '- hostPID',
];

describe('renderStructuredText (podSpecPatch)', () => {
  const json = '{"containers": [{"name": "main", "resources": {"limits": {"memory": "{{v}}"}}}]}';
  const yaml = 'containers:\n  - name: main\n    resources:\n      limits:\n        memory: "{{v}}"\n';
  const yamlPlain = 'containers:\n  - name: main\n    resources:\n      limits:\n        memory: {{v}}\n';

  for (const [form, text] of [
    ['JSON', json],
    ['YAML', yaml],
  ] as const) {
    it(`a quoted value is one string leaf, never structure (${form})`, () => {
      for (const value of HOSTILE) {
        const out = JSON.parse(renderStructuredText(text, 'spec.podSpecPatch', withValue(value)));
        expect(out).toEqual({ containers: [{ name: 'main', resources: { limits: { memory: value } } }] });
      }
    });
  }

  /** An unquoted whole tag: one value in its own place (JSON, or plain words as a string), or refused naming field and tag. */
  const oneValueOrRefused = (text: string, value: string, expectedField: string) => {
    let out: unknown;
    try {
      out = JSON.parse(renderStructuredText(text, 'spec.podSpecPatch', withValue(value)));
    } catch (err) {
      expect(String(err), JSON.stringify(value)).toContain(`${expectedField}: {{v}} stands where a JSON value goes`);
      return;
    }
    let expected: unknown = value;
    try {
      expected = JSON.parse(value);
    } catch {
      // not JSON: the plain words themselves
    }
    expect(out, JSON.stringify(value)).toEqual({ containers: [{ name: 'main', resources: { limits: { memory: expected } } }] });
  };

  it('an unquoted value is one value in its place or refused, never structure beside it (unquoted YAML and JSON)', () => {
    const jsonPlain = '{"containers": [{"name": "main", "resources": {"limits": {"memory": {{v}}}}}]}';
    for (const text of [yamlPlain, jsonPlain])
      for (const value of [...HOSTILE, '1, "hostPID": true', '1}, "hostPID": true, "x": {"y": 1'])
        oneValueOrRefused(text, value, 'spec.podSpecPatch.containers[0].resources.limits.memory');
    expect(() => renderStructuredText(jsonPlain, 'spec.podSpecPatch', withValue('1, "hostPID": true'))).toThrow(
      'spec.podSpecPatch.containers[0].resources.limits.memory: {{v}} stands where a JSON value goes, but its value "1, \\"hostPID\\": true" is not one JSON value',
    );
    expect(() => renderStructuredText(jsonPlain, 'f', withValue('{"__proto__": {"hostPID": true}}'))).toThrow(/__proto__/);
  });

  it('inserts a JSON value where a whole unquoted tag stands (the peer example pod-spec-from-previous-step)', () => {
    const patch = '{"containers":[{"name":"main", "resources":{"limits": {{v}}, "requests": {{v}} }}]}';
    const out = JSON.parse(renderStructuredText(patch, 'f', withValue('{"memory": "10Gi", "cpu": "2000m"}')));
    expect(out).toEqual({
      containers: [{ name: 'main', resources: { limits: { memory: '10Gi', cpu: '2000m' }, requests: { memory: '10Gi', cpu: '2000m' } } }],
    });
    expect(JSON.parse(renderStructuredText(yamlPlain, 'f', withValue('1Gi')))).toEqual({
      containers: [{ name: 'main', resources: { limits: { memory: '1Gi' } } }],
    });
  });

  it('renders every leaf with its own field path', () => {
    const fields: string[] = [];
    const out = renderStructuredText('{"a": ["x{{v}}y", {"b/c": "{{v}}"}], "n": 1}', 'f', (text, field) => {
      fields.push(field);
      return text.replaceAll('{{v}}', '-');
    });
    expect(JSON.parse(out)).toEqual({ a: ['x-y', { 'b/c': '-' }], n: 1 });
    expect(fields).toEqual(['f.a[0]', 'f.a[1]["b/c"]']);
  });

  it('a whole unquoted tag gives the JSON value it reads as, quoted ones and ones with text around stay strings', () => {
    const render = (v: string) =>
      JSON.parse(renderStructuredText('{"activeDeadlineSeconds": {{v}}, "q": "{{v}}", "s": {{v}}x}', 'f', withValue(v)));
    expect(render('30')).toEqual({ activeDeadlineSeconds: 30, q: '30', s: '30x' });
    expect(render('true')).toEqual({ activeDeadlineSeconds: true, q: 'true', s: 'truex' });
    expect(render('null')).toEqual({ activeDeadlineSeconds: null, q: 'null', s: 'nullx' });
    expect(render('[1, 2]')).toEqual({ activeDeadlineSeconds: [1, 2], q: '[1, 2]', s: '[1, 2]x' });
    expect(render('"x"')).toEqual({ activeDeadlineSeconds: 'x', q: '"x"', s: '"x"x' });
    expect(() => render('1e999')).toThrow(/f.activeDeadlineSeconds: \{\{v\}\} gives "1e999", a number out of range/);
  });

  it('gives each leaf its tags as written', () => {
    const seen: string[] = [];
    renderStructuredText(`{"a": "{{=sprig.trim('x')}}", b: '{{=sprig.trim("y")}} {{v}}'}`, 'f', (text) => {
      seen.push(text);
      return '';
    });
    expect(seen).toEqual(["{{=sprig.trim('x')}}", '{{=sprig.trim("y")}} {{v}}']);
  });

  it('refuses tags in keys, bad documents and __proto__, naming the field', () => {
    expect(() => renderStructuredText('{"{{v}}": 1}', 'spec.podSpecPatch', withValue('hostPID'))).toThrow(
      /spec.podSpecPatch.*a key may not hold a tag/,
    );
    expect(() => renderStructuredText('{"a": {{v}', 'spec.podSpecPatch', withValue('x'))).toThrow(/unclosed/);
    expect(() => renderStructuredText('a: [{{v}}', 'spec.podSpecPatch', withValue('x'))).toThrow(
      /spec.podSpecPatch is not valid YAML or JSON/,
    );
    expect(() => renderStructuredText('{"__proto__": {"a": "{{v}}"}}', 'spec.podSpecPatch', withValue('x'))).toThrow(/__proto__/);
  });

  it('pure fuzz: any mix of metacharacters stays one value in its place (or is refused unquoted), in every form', () => {
    const alphabet = [
      '"',
      "'",
      '}',
      ']',
      '{',
      '[',
      '\n',
      ': ',
      '{{',
      '}}',
      '---',
      '...',
      '#',
      '- ',
      ',',
      '\\',
      '&a',
      '*a',
      '!!',
      '|',
      '>',
      ' ',
      'x',
    ];
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let i = 0; i < 400; i++) {
      const value = Array.from({ length: 1 + Math.floor(next() * 12) }, () => alphabet[Math.floor(next() * alphabet.length)]).join('');
      for (const text of [json, yaml]) {
        const out = JSON.parse(renderStructuredText(text, 'f', withValue(value)));
        expect(out, JSON.stringify(value)).toEqual({ containers: [{ name: 'main', resources: { limits: { memory: value } } }] });
      }
      oneValueOrRefused(yamlPlain, value, 'spec.podSpecPatch.containers[0].resources.limits.memory');
    }
  });

  it('leaves text without tags as it is', () => {
    expect(renderStructuredText('a: b # no tags', 'f', () => 'never')).toBe('a: b # no tags');
  });

  it('reads the text as kubectl does, with tags or without: the same reader as an untagged patch', () => {
    // A quoted scalar spanning lines inside a flow list (many published workflows write args so),
    // go-yaml's `no`, and a whole unquoted tag as a number.
    const text = 'containers:\n- name: main\n  args: ["echo\n  {{x}}"]\nhostNetwork: no\npriority: {{n}}\n';
    const out = JSON.parse(renderStructuredText(text, 'p', (s) => s.replace('{{x}}', 'hi').replace('{{n}}', '7')));
    expect(out).toEqual({ containers: [{ name: 'main', args: ['echo hi'] }], hostNetwork: false, priority: 7 });
  });

  it('a whole tag in a block scalar stays text', () => {
    expect(JSON.parse(renderStructuredText('script: |-\n  {{n}}\n', 'p', () => '7'))).toEqual({ script: '7' });
  });
});
