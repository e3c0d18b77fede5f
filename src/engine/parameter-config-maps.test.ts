import { describe, expect, it } from 'vitest';
import type { WorkflowSpec } from '../api/index.js';
import { configMapValue, parameterConfigMapNames } from './parameter-config-maps.js';
import { World } from './test-world.js';

const maps = { settings: { channel: 'stable' } };

describe('configMapValue', () => {
  it('reads the key, falls back to a default or "" when optional, and otherwise names the field and the label', () => {
    expect(configMapValue(maps, { name: 'settings', key: 'channel' }, 'f', false)).toEqual({ ok: true, value: 'stable' });
    expect(configMapValue(maps, { name: 'settings', key: 'nope' }, 'f', true)).toEqual({ ok: true, value: undefined });
    expect(configMapValue(maps, { name: 'settings', key: 'nope', optional: true }, 'f', false)).toEqual({ ok: true, value: '' });
    expect(configMapValue(maps, { name: 'settings', key: 'nope' }, 'f', false)).toEqual({
      ok: false,
      error: 'f.valueFrom.configMapKeyRef: ConfigMap "settings" has no key "nope", and the parameter has no default',
    });
    const missing = configMapValue(maps, { name: 'other', key: 'k' }, 'f', false);
    expect(missing.ok ? '' : missing.error).toContain('with the label workflows.plugflow.io/configmap-type=Parameter');
  });

  it('does not take keys from Object.prototype', () => {
    expect(configMapValue(maps, { name: 'settings', key: 'constructor' }, 'f', false).ok).toBe(false);
    expect(configMapValue(maps, { name: '__proto__', key: 'toString' }, 'f', false).ok).toBe(false);
  });
});

describe('parameterConfigMapNames', () => {
  it('finds the maps of arguments, inputs, step and hook arguments and inline templates', () => {
    const ref = (name: string) => ({ name: 'p', valueFrom: { configMapKeyRef: { name, key: 'k' } } });
    const spec: WorkflowSpec = {
      arguments: { parameters: [ref('args')] },
      templates: [
        {
          name: 'main',
          inputs: { parameters: [ref('inputs')] },
          steps: [
            [
              { name: 'a', template: 'x', arguments: { parameters: [ref('call')] } },
              { name: 'b', inline: { name: '', inputs: { parameters: [ref('inline')] }, container: { image: 'i' } } },
            ],
          ],
          dag: { tasks: [{ name: 't', template: 'x', hooks: { exit: { template: 'x', arguments: { parameters: [ref('hook')] } } } }] },
        },
      ],
    };
    expect(parameterConfigMapNames(spec, spec.templates!)).toEqual(['args', 'call', 'hook', 'inline', 'inputs']);
  });
});

describe('configMapKeyRef parameters in a run', () => {
  const spec = (): WorkflowSpec => ({
    entrypoint: 'main',
    arguments: { parameters: [{ name: 'channel', valueFrom: { configMapKeyRef: { name: 'settings', key: 'channel' } } }] },
    templates: [
      {
        name: 'main',
        inputs: {
          parameters: [
            { name: 'channel' },
            { name: 'region', valueFrom: { configMapKeyRef: { name: 'settings', key: 'region' }, default: 'us' } },
          ],
        },
        container: {
          image: 'alpine',
          command: ['echo', '{{workflow.parameters.channel}} {{inputs.parameters.channel}} {{inputs.parameters.region}}'],
        },
      },
    ],
  });

  it('binds workflow arguments and inputs from the observed ConfigMaps', () => {
    const w = new World(spec(), { parameterConfigMaps: { settings: { channel: 'stable', region: 'eu' } } });
    w.reconcile();
    expect(w.created.get(w.pod('wf').podName)!.template.container?.command).toEqual(['echo', 'stable stable eu']);
  });

  it('fails the workflow at once, naming the argument, when the map is not observed', () => {
    const w = new World(spec());
    w.reconcile();
    expect(w.status.phase).toBe('Failed');
    expect(w.status.message).toMatch(
      /^spec\.arguments\.parameters\[channel\]\.valueFrom\.configMapKeyRef: ConfigMap "settings" was not found/,
    );
  });
});
