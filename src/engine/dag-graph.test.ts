import { describe, expect, it } from 'vitest';
import { buildDagGraph, findCycle, parseTargets, tasksNeededFor, topologicalOrder, unknownDependencies } from './dag-graph.js';

const diamond = buildDagGraph([
  { name: 'a', dependsOn: [] },
  { name: 'b', dependsOn: ['a'] },
  { name: 'c', dependsOn: ['a'] },
  { name: 'd', dependsOn: ['b', 'c'] },
  { name: 'e', dependsOn: [] },
]);

describe('dag graph', () => {
  it('knows dependents and a stable topological order', () => {
    expect(diamond.dependents.get('a')).toEqual(['b', 'c']);
    expect(
      topologicalOrder(
        buildDagGraph([
          { name: 'z', dependsOn: ['y'] },
          { name: 'y', dependsOn: [] },
          { name: 'x', dependsOn: [] },
        ]),
      ),
    ).toEqual(['y', 'z', 'x']);
    expect(topologicalOrder(diamond)).toEqual(['a', 'b', 'c', 'd', 'e']);
  });

  it('finds cycles as a closed path and reports unknown names', () => {
    expect(findCycle(diamond)).toBeUndefined();
    const cyclic = buildDagGraph([
      { name: 'a', dependsOn: ['c'] },
      { name: 'b', dependsOn: ['a'] },
      { name: 'c', dependsOn: ['b', 'ghost'] },
    ]);
    expect(findCycle(cyclic)).toEqual(['a', 'c', 'b', 'a']);
    expect(unknownDependencies(cyclic)).toEqual([{ task: 'c', missing: 'ghost' }]);
    expect(findCycle(buildDagGraph([{ name: 'self', dependsOn: ['self'] }]))).toEqual(['self', 'self']);
  });

  it('limits the work to targets and their ancestors', () => {
    expect(parseTargets(' b  e,')).toEqual(['b', 'e']);
    expect([...tasksNeededFor(diamond, ['b', 'e'])].sort()).toEqual(['a', 'b', 'e']);
    expect(tasksNeededFor(diamond, []).size).toBe(5);
    expect([...tasksNeededFor(diamond, ['d'])].sort()).toEqual(['a', 'b', 'c', 'd']);
  });
});
