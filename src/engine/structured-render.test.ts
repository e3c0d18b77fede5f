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
    ['unquoted YAML', yamlPlain],
  ] as const) {
    it(`a value is one string leaf, never structure (${form})`, () => {
      for (const value of HOSTILE) {
        const out = JSON.parse(renderStructuredText(text, 'spec.podSpecPatch', withValue(value)));
        expect(out).toEqual({ containers: [{ name: 'main', resources: { limits: { memory: value } } }] });
      }
    });
  }

  it('renders every leaf with its own field path', () => {
    const fields: string[] = [];
    const out = renderStructuredText('{"a": ["x{{v}}y", {"b/c": "{{v}}"}], "n": 1}', 'f', (text, field) => {
      fields.push(field);
      return text.replaceAll('{{v}}', '-');
    });
    expect(JSON.parse(out)).toEqual({ a: ['x-y', { 'b/c': '-' }], n: 1 });
    expect(fields).toEqual(['f.a[0]', 'f.a[1]["b/c"]']);
  });

  it('a whole unquoted tag gives a number or boolean when it reads as one, quoted ones stay strings', () => {
    const render = (v: string) =>
      JSON.parse(renderStructuredText('{"activeDeadlineSeconds": {{v}}, "q": "{{v}}", "s": {{v}}x}', 'f', withValue(v)));
    expect(render('30')).toEqual({ activeDeadlineSeconds: 30, q: '30', s: '30x' });
    expect(render('true')).toEqual({ activeDeadlineSeconds: true, q: 'true', s: 'truex' });
    expect(render('null')).toEqual({ activeDeadlineSeconds: 'null', q: 'null', s: 'nullx' });
    expect(render('[1, 2]')).toEqual({ activeDeadlineSeconds: '[1, 2]', q: '[1, 2]', s: '[1, 2]x' });
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

  it('pure fuzz: any mix of metacharacters stays one string leaf, in every form', () => {
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
      for (const text of [json, yaml, yamlPlain]) {
        const out = JSON.parse(renderStructuredText(text, 'f', withValue(value)));
        expect(out, JSON.stringify(value)).toEqual({ containers: [{ name: 'main', resources: { limits: { memory: value } } }] });
      }
    }
  });

  it('leaves text without tags as it is', () => {
    expect(renderStructuredText('a: b # no tags', 'f', () => 'never')).toBe('a: b # no tags');
  });
});
