import { describe, expect, it } from 'vitest';
import type { Template } from '../api/index.js';
import { mayLinkTwice } from './dag-sharing.js';

const wait: Template = { name: 'wait', suspend: {} };
const dag = (tasks: NonNullable<Template['dag']>['tasks']): Template => ({ name: 'main', dag: { tasks } });

describe('whether a node may be linked under two parents', () => {
  it('is false for steps and for DAGs whose tasks wait for one task at most', () => {
    expect(mayLinkTwice([{ name: 'main', steps: [[{ name: 'a', template: 'wait' }]] }, wait], {})).toBe(false);
    const chain = dag([
      { name: 'a', template: 'wait' },
      { name: 'b', template: 'wait', dependencies: ['a'] },
      { name: 'c', template: 'wait', depends: 'b.Succeeded || b.Failed' },
    ]);
    expect(mayLinkTwice([chain, wait], {})).toBe(false);
  });

  it('is true for a task with two dependencies, by list or expression, wherever the DAG is written', () => {
    const diamond = [
      { name: 'a', template: 'wait' },
      { name: 'b', template: 'wait' },
      { name: 'c', template: 'wait', depends: 'a && b' },
    ];
    expect(mayLinkTwice([dag(diamond)], {})).toBe(true);
    expect(mayLinkTwice([dag([...diamond.slice(0, 2), { name: 'c', template: 'wait', dependencies: ['a', 'b'] }])], {})).toBe(true);
    // Inline in a step, and in a WorkflowTemplate the workflow refers to.
    expect(mayLinkTwice([{ name: 'main', steps: [[{ name: 's', inline: dag(diamond) }]] }], {})).toBe(true);
    expect(mayLinkTwice([wait], { 'WorkflowTemplate/shared': { templates: [dag(diamond)] } })).toBe(true);
  });

  it('assumes the worst for a depends expression it cannot read', () => {
    expect(mayLinkTwice([dag([{ name: 'a', template: 'wait', depends: '(((' }])], {})).toBe(true);
  });
});
