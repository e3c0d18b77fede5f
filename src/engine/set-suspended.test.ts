/** `argo node set` on the status, pure: which nodes change, and what is refused, naming the field. */
import { describe, expect, it } from 'vitest';
import type { WorkflowStatus } from '../api/index.js';
import { ResumeError, setSuspendedNodes } from './resume.js';

const NOW = '2026-12-08T00:00:00Z';
const status = (): WorkflowStatus =>
  ({
    phase: 'Running',
    nodes: {
      a: {
        id: 'a',
        name: 'wf[0].approve',
        displayName: 'approve',
        type: 'Suspend',
        phase: 'Running',
        outputs: {
          parameters: [
            { name: 'answer', valueFrom: { supplied: {} } },
            { name: 'level', valueFrom: { supplied: {} }, enum: ['low', 'high'], default: 'low' },
          ],
        },
      },
      b: { id: 'b', name: 'wf[0].build', displayName: 'build', type: 'Pod', phase: 'Running' },
    },
  }) as unknown as WorkflowStatus;

describe('setSuspendedNodes', () => {
  it('sets a supplied output parameter and the message, and leaves the node waiting without a phase', () => {
    const { status: next, set } = setSuspendedNodes(status(), {
      now: NOW,
      node: 'approve',
      outputParameters: { answer: 'yes' },
      message: 'm',
    });
    expect(set).toEqual(['wf[0].approve']);
    expect(next.nodes!.a).toMatchObject({ phase: 'Running', message: 'm' });
    expect(next.nodes!.a!.outputs!.parameters![0]!.value).toBe('yes');
  });

  it('Succeeded fills the other supplied parameters from their defaults and finishes the node', () => {
    const { status: next } = setSuspendedNodes(status(), { now: NOW, outputParameters: { answer: 'yes' }, phase: 'Succeeded' });
    expect(next.nodes!.a).toMatchObject({ phase: 'Succeeded', finishedAt: NOW });
    expect(next.nodes!.a!.outputs!.parameters!.map((p) => p.value)).toEqual(['yes', 'low']);
  });

  it('refuses, naming what is wrong: an undeclared parameter, a value outside the enum, a phase, nothing to set, no waiting node', () => {
    const refused = (o: Parameters<typeof setSuspendedNodes>[1]) => {
      try {
        setSuspendedNodes(status(), o);
        return 'accepted';
      } catch (err) {
        expect(err).toBeInstanceOf(ResumeError);
        return (err as Error).message;
      }
    };
    expect(refused({ now: NOW, outputParameters: { nope: '1' } })).toMatch(
      /outputs\.parameters\[nope\]: the node declares no such output parameter/,
    );
    expect(refused({ now: NOW, outputParameters: { level: 'max' } })).toMatch(/level/);
    expect(refused({ now: NOW, phase: 'Running' })).toMatch(/phase: "Running" is not one of Succeeded, Failed, Error/);
    expect(refused({ now: NOW })).toMatch(/nothing to set/);
    expect(refused({ now: NOW, node: 'build', phase: 'Failed' })).toMatch(/no waiting suspend node named "build"/);
  });

  it('a parameter already set cannot be set again', () => {
    const once = setSuspendedNodes(status(), { now: NOW, outputParameters: { answer: 'yes' } }).status;
    expect(() => setSuspendedNodes(once, { now: NOW, outputParameters: { answer: 'no' } })).toThrow(/no value yet/);
  });
});
