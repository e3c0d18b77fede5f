import { describe, expect, it } from 'vitest';
import type { WorkflowSpec } from '../api/index.js';
import { decideAgent, MAX_AGENT_REPLACEMENTS } from './agent-replacement.js';
import type { AgentObservation } from './contract.js';
import { World } from './test-world.js';

const failed = (uid: string): AgentObservation => ({
  phase: 'Failed',
  message: 'agent pod wf-agent failed: main: Error (exit code 2)',
  replacing: true,
  podName: 'wf-agent',
  podUID: uid,
});

describe('agent replacement decided in the engine', () => {
  it('replaces the first failed pod and counts it', () => {
    const d = decideAgent(undefined, failed('p1'));
    expect(d.agent).toEqual(failed('p1'));
    expect(d.replace).toEqual({
      record: { replacements: 1, replacedPodUID: 'p1' },
      action: { kind: 'replaceAgent', podName: 'wf-agent', podUID: 'p1', reason: failed('p1').message, replacement: 1 },
    });
  });

  it('counts a failed pod once, however many reconciles see it', () => {
    const d = decideAgent({ replacements: 3, replacedPodUID: 'p3' }, failed('p3'));
    expect(d.replace?.record).toEqual({ replacements: 3, replacedPodUID: 'p3' });
  });

  it(`replaces up to the bound (${MAX_AGENT_REPLACEMENTS}) and gives up on the next failed pod`, () => {
    const under = decideAgent({ replacements: MAX_AGENT_REPLACEMENTS - 2, replacedPodUID: 'a' }, failed('b'));
    expect(under.replace?.record.replacements).toBe(MAX_AGENT_REPLACEMENTS - 1);
    const at = decideAgent({ replacements: MAX_AGENT_REPLACEMENTS - 1, replacedPodUID: 'a' }, failed('b'));
    expect(at.replace?.record).toEqual({ replacements: MAX_AGENT_REPLACEMENTS, replacedPodUID: 'b' });
    expect(at.agent?.replacing).toBe(true);
    const over = decideAgent({ replacements: MAX_AGENT_REPLACEMENTS, replacedPodUID: 'a' }, failed('b'));
    expect(over.replace).toBeUndefined();
    expect(over.agent).toEqual({
      phase: 'Failed',
      message: `${failed('b').message}; it failed ${MAX_AGENT_REPLACEMENTS + 1} times, the controller gave up replacing it`,
    });
  });

  it('replaces a deleted (not failed) pod without counting, and leaves other observations alone', () => {
    const deleted: AgentObservation = {
      phase: 'Failed',
      message: 'agent pod wf-agent was deleted',
      replacing: true,
      deleted: true,
      podName: 'wf-agent',
      podUID: 'p1',
    };
    expect(decideAgent({ replacements: MAX_AGENT_REPLACEMENTS, replacedPodUID: 'p0' }, deleted)).toEqual({ agent: deleted });
    const cannotCreate: AgentObservation = { phase: 'Failed', message: 'the agent pod cannot be built' };
    expect(decideAgent(undefined, cannotCreate)).toEqual({ agent: cannotCreate });
    expect(decideAgent(undefined, { phase: 'Running' })).toEqual({ agent: { phase: 'Running' } });
    expect(decideAgent(undefined, undefined)).toEqual({ agent: undefined });
  });
});

describe('agent replacement over reconciles (count kept in status.agent)', () => {
  const spec: WorkflowSpec = {
    entrypoint: 'main',
    templates: [
      { name: 'main', steps: [[{ name: 'greet', template: 'hello' }]] },
      { name: 'hello', plugin: { hello: { name: 'Ada' } } },
    ],
  };

  it(`replaces ${MAX_AGENT_REPLACEMENTS} failed pods, each counted once, then ends the waiting task in Error`, () => {
    const w = new World(spec);
    w.reconcile();
    for (let i = 1; i <= MAX_AGENT_REPLACEMENTS; i++) {
      w.agent = failed(`p${i}`);
      w.reconcile();
      w.reconcile(); // the same failed pod seen again (being deleted): not counted twice
      expect(w.status.agent).toEqual({ replacements: i, replacedPodUID: `p${i}` });
      expect(w.node('greet').phase).toBe('Pending');
      expect(w.lastActions).toContainEqual(expect.objectContaining({ kind: 'replaceAgent', podUID: `p${i}`, replacement: i }));
    }
    expect(w.agentsReplaced).toEqual(['p1', 'p1', 'p2', 'p2', 'p3', 'p3', 'p4', 'p4', 'p5', 'p5']);
    // A controller restarted here starts from the stored status like any reconcile: the engine keeps no memory.
    w.agent = failed('p6');
    w.reconcile();
    expect(w.lastActions.some((a) => a.kind === 'replaceAgent' || a.kind === 'ensureAgent')).toBe(false);
    expect(w.node('greet')).toMatchObject({
      phase: 'Error',
      message: `${failed('p6').message}; it failed 6 times, the controller gave up replacing it`,
    });
    expect(w.status.phase).toBe('Error');
  });

  it('neither counts nor replaces a failed pod when no task waits for it', () => {
    const w = new World(spec);
    w.reconcile();
    w.reportTask('greet', 'Succeeded');
    w.agent = failed('p1');
    w.reconcile();
    expect(w.status.phase).toBe('Succeeded');
    expect(w.status.agent).toBeUndefined();
    expect(w.agentsReplaced).toEqual([]);
  });
});
