import { describe, expect, it } from 'vitest';
import { printLines } from './workflow-ops.js';

async function* chunks(...parts: Buffer[]): AsyncIterable<Buffer> {
  for (const p of parts) yield p;
}

describe('printLines (plugflow logs)', () => {
  it('prints whole lines with their prefix, keeps a partial line for the next chunk, and decodes split UTF-8 whole', async () => {
    const text = Buffer.from('héllo\nwörld\nlast');
    // Split inside the two-byte "é" and inside "wörld".
    const cut = text.indexOf(0xc3) + 1;
    const out: string[] = [];
    await printLines(chunks(text.subarray(0, cut), text.subarray(cut, 9), text.subarray(9)), 'pod | ', (l) => out.push(l));
    expect(out).toEqual(['pod | héllo', 'pod | wörld', 'pod | last']);
  });
});
