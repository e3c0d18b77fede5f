import { describe, expect, it } from 'vitest';
import { fileTable, layoutTable, replaceBlock } from './tables.js';

describe('layout tables', () => {
  it('lists the layers top first, marking the folders with a barrel', () => {
    const table = layoutTable([
      { layer: 'bottom', folders: { api: { text: 'records', barrel: true } } },
      { layer: 'top', folders: { cli: 'commands | flags' } },
    ]);
    expect(table.split('\n')).toEqual([
      '| layer | folder | what it is |',
      '|---|---|---|',
      '| top | `src/cli/` | commands \\| flags |',
      '| bottom | `src/api/` (index.ts) | records |',
    ]);
  });

  it('writes a file table', () => {
    expect(fileTable([{ file: 'a.ts', summary: 'Does a.' }])).toBe('| file | what it is |\n|---|---|\n| `a.ts` | Does a. |');
  });

  it('replaces only between the markers, and says when there are none', () => {
    const doc = 'head\n<!-- files:begin (generated) -->\nold\n<!-- files:end -->\ntail\n';
    expect(replaceBlock(doc, 'files', 'new')).toBe('head\n<!-- files:begin (generated) -->\nnew\n<!-- files:end -->\ntail\n');
    expect(replaceBlock('no markers', 'files', 'new')).toBeUndefined();
    expect(replaceBlock('<!-- files:begin -->\nno end', 'files', 'new')).toBeUndefined();
  });
});
