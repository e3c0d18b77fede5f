import { describe, expect, it } from 'vitest';
import type { WorkflowEventBinding } from '../api/index.js';
import { eventEnvironment, eventMetadataFromHeaders } from '../expr/index.js';
import { BindingFailure, compileBinding, evaluateSubmission, matches } from './binding-compile.js';
import { errorMessage } from '../log/error-message.js';

function binding(spec: unknown, name = 'on-push'): WorkflowEventBinding {
  return { metadata: { name, namespace: 'ns', uid: 'u1', generation: 1 }, spec } as WorkflowEventBinding;
}

const good = binding({
  event: { selector: 'payload.repo == "plugflow" && metadata["x-event"] == ["push"]' },
  submit: {
    workflowTemplateRef: { name: 'build' },
    arguments: {
      parameters: [
        { name: 'repo', valueFrom: { event: 'payload.repo' } },
        { name: 'commits', valueFrom: { event: 'payload.commits' } },
        { name: 'fixed', value: 'yes' },
      ],
    },
    metadata: { name: '"build-" + payload.id', labels: { repo: 'payload.repo' }, annotations: { sender: 'metadata["x-sender"][0]' } },
  },
});

const env = (payload: unknown, headers: Record<string, string | string[]> = {}, discriminator = '') =>
  eventEnvironment({ payload, metadata: eventMetadataFromHeaders(headers), discriminator });

describe('compiling a binding', () => {
  it('reports a literal parameter value too deep or too large to write, without throwing', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 500; i++) deep = [deep];
    const c = compileBinding(
      binding({
        event: { selector: 'true' },
        submit: {
          workflowTemplateRef: { name: 'build' },
          arguments: {
            parameters: [
              { name: 'deep', value: deep },
              { name: 'wide', value: Array.from({ length: 2_000_000 }, () => 1) },
              { name: 'ok', value: { a: 1 } },
            ],
          },
        },
      }),
    );
    expect(c.problems).toEqual([
      expect.stringMatching(
        /^spec\.submit\.arguments\.parameters\[0\]\.value \(parameter "deep"\) cannot be used: .*nested more than \d+ levels deep/,
      ),
      expect.stringMatching(/^spec\.submit\.arguments\.parameters\[1\]\.value \(parameter "wide"\) cannot be used: .*too large/),
    ]);
    expect(c.parameters).toEqual([{ name: 'ok', value: '{"a":1}' }]);
  });

  it('compiles every expression once and finds no problem in a good binding', () => {
    const c = compileBinding(good);
    expect(c.problems).toEqual([]);
    expect(c.template).toEqual({ name: 'build', clusterScope: false });
    expect(c.parameters.map((p) => p.name)).toEqual(['repo', 'commits', 'fixed']);
  });

  it('names the field of each expression that does not compile', () => {
    const c = compileBinding(
      binding({
        event: { selector: 'payload.a ==' },
        submit: {
          workflowTemplateRef: { name: 'build' },
          arguments: { parameters: [{ name: 'p', valueFrom: { event: 'payload.(' } }] },
          metadata: { labels: { team: 'upper(' } },
        },
      }),
    );
    expect(c.problems).toHaveLength(3);
    expect(c.problems[0]).toMatch(/^spec\.event\.selector/);
    expect(c.problems[1]).toMatch(/^spec\.submit\.arguments\.parameters\[0\]\.valueFrom\.event \(parameter "p"\)/);
    expect(c.problems[2]).toMatch(/^spec\.submit\.metadata\.labels\["team"\]/);
  });

  it('reports missing parts: selector, submit, template name, parameter values', () => {
    expect(compileBinding(binding({ event: {} })).problems).toEqual([
      expect.stringMatching(/^spec\.event\.selector is required/),
      expect.stringMatching(/^spec\.submit is required/),
    ]);
    const c = compileBinding(
      binding({ event: { selector: 'true' }, submit: { workflowTemplateRef: {}, arguments: { parameters: [{ name: 'x' }] } } }),
    );
    expect(c.problems).toEqual([
      expect.stringMatching(/^spec\.submit\.workflowTemplateRef\.name is required/),
      expect.stringMatching(/^spec\.submit\.arguments\.parameters\[0\] \(parameter "x"\) needs valueFrom\.event/),
    ]);
  });

  it('refuses non-string metadata values and a binding name too long for a label', () => {
    const c = compileBinding(
      binding(
        { event: { selector: 'true' }, submit: { workflowTemplateRef: { name: 't' }, metadata: { labels: { n: 5 } } } },
        'b'.repeat(64),
      ),
    );
    expect(c.problems).toEqual([
      expect.stringMatching(/^metadata\.name is longer than 63/),
      expect.stringMatching(/^spec\.submit\.metadata\.labels\["n"\] must be a string expression/),
    ]);
  });

  it('reads clusterScope for a ClusterWorkflowTemplate', () => {
    expect(
      compileBinding(binding({ event: { selector: 'true' }, submit: { workflowTemplateRef: { name: 'c', clusterScope: true } } })).template,
    ).toEqual({ name: 'c', clusterScope: true });
  });
});

describe('an event against a binding', () => {
  const c = compileBinding(good);
  const push = { repo: 'plugflow', id: 'abc7', n: 7, commits: [{ id: 'a' }] };

  it('matches with the header as a lower-case x- name holding a list', () => {
    expect(matches(c, env(push, { 'X-Event': 'push', 'x-sender': 'ann' }))).toBe(true);
  });

  it('does not match the wrong forms of the spec: upper-case name, no x- prefix, plain string, authorization', () => {
    const upper = compileBinding(binding({ event: { selector: 'metadata["X-Event"] == ["push"]' }, submit: good.spec.submit }));
    const noPrefix = compileBinding(binding({ event: { selector: 'metadata["event"] == ["push"]' }, submit: good.spec.submit }));
    const plain = compileBinding(binding({ event: { selector: 'metadata["x-event"] == "push"' }, submit: good.spec.submit }));
    const auth = compileBinding(binding({ event: { selector: 'metadata["authorization"] != nil' }, submit: good.spec.submit }));
    const e = env(push, { 'X-Event': 'push', Event: 'push', Authorization: 'Bearer secret' });
    expect(matches(upper, e)).toBe(false);
    expect(matches(noPrefix, e)).toBe(false);
    expect(matches(plain, e)).toBe(false);
    expect(matches(auth, e)).toBe(false);
  });

  it('can select on the discriminator', () => {
    const d = compileBinding(binding({ event: { selector: 'discriminator == "github"' }, submit: good.spec.submit }));
    expect(matches(d, env({}, {}, 'github'))).toBe(true);
    expect(matches(d, env({}, {}, ''))).toBe(false);
  });

  it('fails with selector_error when the selector is not boolean or fails', () => {
    const s = compileBinding(binding({ event: { selector: 'payload.repo' }, submit: good.spec.submit }));
    expect(() => matches(s, env(push))).toThrow(BindingFailure);
    expect(() => matches(s, env(push))).toThrow(/must evaluate to a boolean/);
    const nilMember = compileBinding(binding({ event: { selector: 'payload.a.b == 1' }, submit: good.spec.submit }));
    try {
      matches(nilMember, env({}));
      expect.unreachable();
    } catch (err) {
      expect((err as BindingFailure).outcome).toBe('selector_error');
    }
  });

  it('evaluates parameters (strings plain, the rest compact JSON) and metadata', () => {
    const s = evaluateSubmission(c, env(push, { 'x-sender': 'ann' }));
    expect(s.parameters).toEqual([
      { name: 'repo', value: 'plugflow' },
      { name: 'commits', value: '[{"id":"a"}]' },
      { name: 'fixed', value: 'yes' },
    ]);
    expect(s.name).toBe('build-abc7');
    expect(s.labels).toEqual({ repo: 'plugflow' });
    expect(s.annotations).toEqual({ sender: 'ann' });
  });

  it('fails with metadata_error when metadata yields a non-string or an invalid name', () => {
    const num = compileBinding(
      binding({ event: { selector: 'true' }, submit: { workflowTemplateRef: { name: 't' }, metadata: { labels: { n: 'payload.n' } } } }),
    );
    expect(() => evaluateSubmission(num, env(push))).toThrow(/must evaluate to a string, got float( |$)/);
    const bad = compileBinding(
      binding({ event: { selector: 'true' }, submit: { workflowTemplateRef: { name: 't' }, metadata: { name: '"Not_Valid"' } } }),
    );
    try {
      evaluateSubmission(bad, env(push));
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(BindingFailure);
      expect((err as BindingFailure).outcome).toBe('metadata_error');
      expect(errorMessage(err)).toMatch(/spec\.submit\.metadata\.name evaluated to string of 9 bytes, which is not a valid object name/);
    }
  });
});

describe('payload values in failure messages (logged and recorded as Warning Events)', () => {
  const SECRET = 'ghp_0123456789abcdefSECRETSECRET';
  const payload = { secret: SECRET, list: [SECRET], nested: { token: SECRET } };
  const failure = (f: () => unknown): string => {
    try {
      f();
    } catch (err) {
      expect(err).toBeInstanceOf(BindingFailure);
      return errorMessage(err);
    }
    throw new Error('expected a BindingFailure');
  };
  const withSelector = (selector: string) =>
    compileBinding(binding({ event: { selector }, submit: { workflowTemplateRef: { name: 'build' } } }));
  const withParam = (event: string) =>
    compileBinding(
      binding({
        event: { selector: 'true' },
        submit: { workflowTemplateRef: { name: 'build' }, arguments: { parameters: [{ name: 'p', valueFrom: { event } }] } },
      }),
    );

  it.each([
    ['a selector yielding the secret', () => matches(withSelector('payload.secret'), env(payload)), /got string of 32 bytes/],
    ['a selector yielding a list of it', () => matches(withSelector('payload.list'), env(payload)), /got array of 1 items/],
    ['a selector yielding a map of it', () => matches(withSelector('payload.nested'), env(payload)), /got map of 1 keys/],
    [
      'int() of the secret',
      () => matches(withSelector('int(payload.secret) > 0'), env(payload)),
      /int\(string of 32 bytes\): not an integer/,
    ],
    [
      'float() of the secret',
      () => matches(withSelector('float(payload.secret) > 0'), env(payload)),
      /float\(string of 32 bytes\): not a number/,
    ],
    [
      'the secret as a regular expression',
      () => matches(withSelector('"x" matches payload.secret + "("'), env(payload)),
      /invalid regular expression \(string of 33 bytes\)/,
    ],
    [
      'the secret as a sort order',
      () => evaluateSubmission(withParam('sort([1], payload.secret)'), env(payload)),
      /invalid order \(string of 32 bytes\)/,
    ],
    [
      'a name made from it',
      () =>
        evaluateSubmission(
          compileBinding(
            binding({
              event: { selector: 'true' },
              submit: { workflowTemplateRef: { name: 'build' }, metadata: { name: 'payload.secret' } },
            }),
          ),
          env(payload),
        ),
      /evaluated to string of 32 bytes, which is not a valid object name/,
    ],
  ])('%s: type and size, never the value', (_what, f, expected) => {
    const message = failure(f);
    expect(message).toMatch(expected);
    expect(message).not.toContain('ghp_');
    expect(message).not.toContain('SECRET');
  });
});
