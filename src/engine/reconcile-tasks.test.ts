import { describe, expect, it } from 'vitest';
import type { Template, WorkflowSpec } from '../api/index.js';
import { PLUGINS_DISABLED_MESSAGE } from './execute-task.js';
import { World } from './test-world.js';

const hello: Template = {
  name: 'hello',
  inputs: { parameters: [{ name: 'who', default: 'world' }] },
  plugin: { hello: { greeting: 'hi {{inputs.parameters.who}}' } },
  outputs: { parameters: [{ name: 'reply' }, { name: 'extra', default: 'none' }] },
};
const fetch: Template = { name: 'fetch', http: { url: 'https://example.com/{{workflow.name}}' } };

function flow(...steps: Array<{ name: string; template: string }>): WorkflowSpec {
  return { entrypoint: 'main', templates: [{ name: 'main', steps: [steps] }, hello, fetch] };
}

describe('plugin and http nodes', () => {
  it('hands a plugin node to the agent as a resolved task and copies its result back', () => {
    const w = new World(flow({ name: 'greet', template: 'hello' }));
    const r = w.reconcile();
    const node = w.node('greet');
    expect(node).toMatchObject({ type: 'Plugin', phase: 'Pending' });
    expect(r.actions).toEqual([
      {
        kind: 'writeTask',
        nodeId: node.id,
        template: { ...hello, inputs: { parameters: [{ name: 'who', value: 'world' }] }, plugin: { hello: { greeting: 'hi world' } } },
      },
      { kind: 'ensureAgent' },
    ]);
    expect(w.agentEnsured).toBe(true);

    w.reportTask('greet', 'Running', { message: 'working', progress: '1/4' });
    w.reconcile();
    expect(w.node('greet')).toMatchObject({ phase: 'Running', message: 'working', progress: '1/4' });
    expect(w.lastActions).toEqual([{ kind: 'ensureAgent' }]);

    w.reportTask('greet', 'Succeeded', { outputs: { parameters: [{ name: 'reply', value: 'hello back' }] }, progress: '4/4' });
    const done = w.reconcile();
    expect(w.node('greet')).toMatchObject({
      phase: 'Succeeded',
      outputs: {
        parameters: [
          { name: 'reply', value: 'hello back' },
          { name: 'extra', value: 'none' },
        ],
      },
    });
    expect(done.actions).toEqual([{ kind: 'removeTask', nodeId: node.id }, { kind: 'completeTaskSet' }]);
    expect(w.status).toMatchObject({ phase: 'Succeeded', progress: '4/4' });
    expect(w.taskSpecs.size).toBe(0);
    expect(w.taskSetCompleted).toBe(true);
  });

  it('fails a plugin node at once when executor plugins are disabled, saying how to enable them', () => {
    const w = new World(flow({ name: 'greet', template: 'hello' }), { pluginsEnabled: false });
    const r = w.reconcile();
    expect(w.node('greet')).toMatchObject({ type: 'Plugin', phase: 'Failed', message: PLUGINS_DISABLED_MESSAGE });
    expect(PLUGINS_DISABLED_MESSAGE).toContain('WORKFLOW_EXECUTOR_PLUGINS=true');
    expect(r.actions.filter((a) => a.kind === 'writeTask')).toEqual([]);
    expect(w.status.phase).toBe('Failed');
  });

  it('runs http nodes without the plugin gate', () => {
    const w = new World(flow({ name: 'get', template: 'fetch' }), { pluginsEnabled: false });
    w.reconcile();
    expect(w.node('get').type).toBe('HTTP');
    expect(w.taskSpecs.get(w.node('get').id)).toEqual({ name: 'fetch', http: { url: 'https://example.com/wf' } });
    w.reportTask('get', 'Failed', { message: 'received non-2xx response code: 500', outputs: { result: 'oops' } });
    w.reconcile();
    expect(w.node('get')).toMatchObject({ phase: 'Failed', message: 'received non-2xx response code: 500', outputs: { result: 'oops' } });
    expect(w.status.phase).toBe('Failed');
    expect(w.taskSetCompleted).toBe(true);
  });

  it('ends every unfinished task node in Error when the agent pod fails', () => {
    const w = new World(flow({ name: 'greet', template: 'hello' }, { name: 'get', template: 'fetch' }));
    w.reconcile();
    w.reportTask('greet', 'Running');
    w.reconcile();
    w.agent = { phase: 'Failed', message: 'agent pod wf-agent failed: ImagePullBackOff' };
    w.reconcile();
    expect(w.node('greet')).toMatchObject({ phase: 'Error', message: 'agent pod wf-agent failed: ImagePullBackOff' });
    expect(w.node('get')).toMatchObject({ phase: 'Error', message: 'agent pod wf-agent failed: ImagePullBackOff' });
    expect(w.status.phase).toBe('Error');
  });

  it('ends only the tasks a replaced agent pod had taken in Error; the others wait for the new pod', () => {
    const w = new World(flow({ name: 'greet', template: 'hello' }, { name: 'get', template: 'fetch' }));
    w.reconcile();
    w.reportTask('greet', 'Running');
    w.reconcile();
    w.agent = { phase: 'Failed', message: 'agent pod wf-agent was deleted', replacing: true };
    w.reconcile();
    expect(w.node('greet')).toMatchObject({ phase: 'Error', message: 'agent pod wf-agent was deleted' });
    expect(w.node('get').phase).toBe('Pending');
    expect(w.lastActions).toContainEqual({ kind: 'removeTask', nodeId: w.node('greet').id });
    expect(w.lastActions).toContainEqual({ kind: 'ensureAgent' });
    expect(w.status.phase).toBe('Running');
    w.agent = { phase: 'Running' };
    w.reportTask('get', 'Succeeded');
    w.reconcile();
    expect(w.node('get').phase).toBe('Succeeded');
    expect(w.status.phase).toBe('Error');
  });

  it('runs the retry of a task lost with its agent pod on the replacement pod', () => {
    const w = new World({
      entrypoint: 'main',
      templates: [
        { name: 'main', steps: [[{ name: 'greet', template: 'hello' }]] },
        { ...hello, retryStrategy: { limit: 1, retryPolicy: 'Always' } },
      ],
    });
    w.reconcile();
    w.reportTask('greet(0)', 'Running');
    w.reconcile();
    w.agent = { phase: 'Failed', message: 'agent pod wf-agent failed: main: Error (exit code 1)', replacing: true };
    w.reconcile();
    expect(w.node('greet(0)')).toMatchObject({ phase: 'Error', message: 'agent pod wf-agent failed: main: Error (exit code 1)' });
    // The retry is created while the failed pod is still there: it waits instead of failing too.
    w.reconcile();
    expect(w.node('greet(1)').phase).toBe('Pending');
    expect(w.taskSpecs.has(w.node('greet(1)').id)).toBe(true);
    w.agent = { phase: 'Running' };
    w.reportTask('greet(1)', 'Succeeded', { outputs: { parameters: [{ name: 'reply', value: 'ok' }] } });
    w.reconcile();
    expect(w.node('greet')).toMatchObject({ type: 'Retry', phase: 'Succeeded' });
    expect(w.status.phase).toBe('Succeeded');
  });

  it('fails a task node whose report vanished instead of running it again', () => {
    const w = new World(flow({ name: 'greet', template: 'hello' }));
    w.reconcile();
    w.reportTask('greet', 'Running');
    w.reconcile();
    w.taskResults.clear();
    w.reconcile();
    expect(w.node('greet').phase).toBe('Error');
    expect(w.lastActions.filter((a) => a.kind === 'writeTask')).toEqual([]);
  });

  it('retries plugin nodes with their retryStrategy', () => {
    const w = new World({
      entrypoint: 'main',
      templates: [
        { name: 'main', steps: [[{ name: 'greet', template: 'hello' }]] },
        { ...hello, retryStrategy: { limit: 1 } },
      ],
    });
    w.reconcile();
    w.reportTask('greet(0)', 'Failed', { message: '403: forbidden' });
    w.reconcile();
    expect(w.node('greet(0)').phase).toBe('Failed');
    expect(w.taskSpecs.has(w.node('greet(1)').id)).toBe(true);
    w.reportTask('greet(1)', 'Succeeded', { outputs: { parameters: [{ name: 'reply', value: 'ok' }] } });
    w.reconcile();
    expect(w.node('greet')).toMatchObject({ type: 'Retry', phase: 'Succeeded' });
    expect(w.status.phase).toBe('Succeeded');
  });

  it('fails a task node that times out and removes its task', () => {
    const w = new World({ entrypoint: 'slow', templates: [{ ...fetch, name: 'slow', timeout: '30s' }] });
    w.reconcile();
    expect(w.requeueAt).toBe('2024-01-01T00:00:30.000Z');
    w.advance(30);
    const r = w.reconcile();
    expect(w.node('wf')).toMatchObject({ phase: 'Failed', message: 'Step exceeded its timeout of 30s' });
    expect(r.actions).toContainEqual({ kind: 'removeTask', nodeId: 'wf' });
    expect(w.status.phase).toBe('Failed');
  });

  it('fails a plugin node whose declared output is missing', () => {
    const w = new World(flow({ name: 'greet', template: 'hello' }));
    w.reconcile();
    w.reportTask('greet', 'Succeeded', {});
    w.reconcile();
    expect(w.node('greet')).toMatchObject({
      phase: 'Error',
      message: 'spec.templates[hello].outputs.parameters[reply]: no value was produced and there is no default',
    });
  });
});

describe('plugin gate turned off while a plugin node runs', () => {
  it('fails the node and removes its task', () => {
    const w = new World(flow({ name: 'greet', template: 'hello' }));
    w.reconcile();
    w.reportTask('greet', 'Running');
    w.reconcile();
    w.pluginsEnabled = false;
    const r = w.reconcile();
    expect(w.node('greet')).toMatchObject({ phase: 'Failed', message: PLUGINS_DISABLED_MESSAGE });
    expect(r.actions).toContainEqual({ kind: 'removeTask', nodeId: w.node('greet').id });
  });
});
