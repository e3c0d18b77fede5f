import { describe, expect, it } from 'vitest';
import { templateKindOf } from './template-kind.js';
import { TEMPLATE_KINDS, type Template } from './template.js';
import { NODE_PHASES } from './values/enums.js';
import type { NodePhase } from './workflow-status.js';

describe('templateKindOf', () => {
  it('finds each of the ten kinds', () => {
    const sections: Record<string, unknown> = {
      container: { image: 'busybox' },
      script: { image: 'python', source: 'print(1)' },
      dag: { tasks: [] },
      steps: [],
      suspend: {},
      resource: { action: 'get' },
      http: { url: 'https://example.com' },
      plugin: { hello: {} },
      containerSet: { containers: [] },
      data: { source: {}, transformation: [] },
    };
    for (const kind of TEMPLATE_KINDS) {
      expect(templateKindOf({ name: 't', [kind]: sections[kind] } as Template)).toBe(kind);
    }
  });

  it('explains a template without a kind, naming the field', () => {
    expect(() => templateKindOf({ name: 't', inputs: {} }, 'spec.templates[3]')).toThrow(
      'spec.templates[3] has no kind: set exactly one of container, script, dag, steps, suspend, resource, http, plugin, containerSet, data',
    );
  });

  it('explains a template with several kinds', () => {
    expect(() => templateKindOf({ name: 't', container: {}, script: { source: '' } }, 'spec.templates[0]')).toThrow(
      /^spec\.templates\[0\] has 2 kinds \(container, script\): set exactly one of/,
    );
  });

  it('ignores null sections (as YAML gives them for `container:` with nothing after it)', () => {
    expect(templateKindOf({ name: 't', container: null, suspend: {} } as unknown as Template)).toBe('suspend');
  });
});

describe('NODE_PHASES', () => {
  it('lists exactly the NodePhase values', () => {
    const all: Record<NodePhase, true> = {
      Pending: true,
      Running: true,
      Succeeded: true,
      Failed: true,
      Error: true,
      Skipped: true,
      Omitted: true,
    };
    expect([...NODE_PHASES].sort()).toEqual(Object.keys(all).sort());
  });
});
