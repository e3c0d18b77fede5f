/**
 * User JSON entering the server (issue 10 item 1): workflow bodies and bindings with a
 * `__proto__` key are refused naming the field; event payloads keep `constructor`/`prototype`
 * as data and never reach Object.prototype through selectors or parameters.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { WorkflowEventBinding } from '../api/index.js';
import { parseUserJson } from '../api/index.js';
import { eventEnvironment } from '../expr/index.js';
import { compileBinding, evaluateSubmission, matches } from './binding-compile.js';
import { workflowShapeProblems } from '../api/crd/workflow-shape.js';

afterEach(() => {
  delete (Object.prototype as Record<string, unknown>).polluted;
});

const binding = (spec: unknown) => ({ metadata: { name: 'b', namespace: 'ns', uid: 'u', generation: 1 }, spec }) as WorkflowEventBinding;

describe('prototype keys at the server', () => {
  it('a workflow body with __proto__ anywhere fails the shape check naming the field', () => {
    const wf = JSON.parse(
      '{"apiVersion":"plugflow.io/v1alpha1","kind":"Workflow","metadata":{"generateName":"x-"},"spec":{"entrypoint":"m","templates":[{"name":"m","container":{"image":"a","command":["true"],"__proto__":{"polluted":1}}}]}}',
    ) as unknown;
    const problems = workflowShapeProblems(wf);
    expect(problems.map((p) => p.message)).toEqual([
      `spec.templates[0].container.__proto__ is a key named "__proto__", which plugflow refuses in user JSON and YAML (it could rewrite object prototypes): rename or remove it`,
    ]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('a binding with __proto__ is refused and never used', () => {
    const spec = JSON.parse(
      '{"event":{"selector":"true"},"submit":{"workflowTemplateRef":{"name":"t"},"arguments":{"parameters":[{"name":"p","value":"v","__proto__":{"polluted":1}}]}}}',
    ) as unknown;
    const c = compileBinding(binding(spec));
    expect(c.problems).toEqual([expect.stringMatching(/^spec\.submit\.arguments\.parameters\[0\]\.__proto__ is a key named "__proto__"/)]);
    expect(c.selector).toBeUndefined();
  });

  it('event payloads: __proto__ refused at parse, constructor/prototype stay data in selectors and parameters', () => {
    expect(() => parseUserJson('{"a":{"__proto__":{"polluted":1}}}', 'the event body')).toThrow(/the event body: a.__proto__/);
    const c = compileBinding(
      binding({
        event: { selector: 'payload.constructor.prototype.polluted == 1' },
        submit: {
          workflowTemplateRef: { name: 't' },
          arguments: { parameters: [{ name: 'p', valueFrom: { event: 'payload.constructor' } }] },
        },
      }),
    );
    expect(c.problems).toEqual([]);
    const payload = parseUserJson('{"constructor":{"prototype":{"polluted":1}}}', 'the event body');
    const env = eventEnvironment({ payload });
    expect(matches(c, env)).toBe(true);
    expect(evaluateSubmission(c, env).parameters).toEqual([{ name: 'p', value: '{"prototype":{"polluted":1}}' }]);
    // An inherited `constructor` is never followed: on a plain payload it is nil.
    expect(() => matches(c, eventEnvironment({ payload: {} }))).toThrow(/payload.constructor is nil/);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
