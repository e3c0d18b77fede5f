/**
 * Workflows the artifact suites share: a step `gen` whose outputs a step `use` takes as inputs
 * of the same names (`from: {{steps.gen.outputs.artifacts.NAME}}`), each step a `sh -c` script.
 */
import type { Template, Workflow } from '../../src/api/index.js';
import { workflow } from '../controller-harness.js';

/** A template running `sh -c script` in alpine, with `extra` fields (inputs, outputs, …). */
export function sh(name: string, script: string, extra: Partial<Template> = {}): Template {
  return { name, ...extra, container: { image: 'alpine:3', command: ['sh', '-c', script] } };
}

/** `gen` then `use`, passing the artifacts named `passed`; `spec` adds workflow fields. */
export function passing(name: string, passed: string[], gen: Template, use: Template, spec: Partial<Workflow['spec']> = {}): Workflow {
  return workflow(name, {
    entrypoint: 'main',
    ...spec,
    templates: [
      {
        name: 'main',
        steps: [
          [{ name: 'gen', template: gen.name }],
          [
            {
              name: 'use',
              template: use.name,
              arguments: { artifacts: passed.map((a) => ({ name: a, from: `{{steps.gen.outputs.artifacts.${a}}}` })) },
            },
          ],
        ],
      },
      gen,
      use,
    ],
  });
}
