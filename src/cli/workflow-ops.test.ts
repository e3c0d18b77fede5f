import { describe, expect, it } from 'vitest';
import { Command } from 'commander';
import { createServer } from 'node:http';
import { printLines } from './workflow-ops.js';
import { registerWorkflowOperationCommands } from './workflow-operations.js';

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

describe('plugflow resume', () => {
  it('sends the values of --parameter and --set (its alias) to the REST API as the peer body', async () => {
    const bodies: { url?: string; body: unknown }[] = [];
    const server = createServer((req, res) => {
      let text = '';
      req.on('data', (c: Buffer) => (text += c.toString()));
      req.on('end', () => {
        bodies.push({ url: req.url, body: JSON.parse(text || 'null') });
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ metadata: { name: 'wf', namespace: 'ns' } }));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    const program = new Command().exitOverride();
    registerWorkflowOperationCommands(program);
    const log = console.log;
    console.log = () => {};
    try {
      await program.parseAsync(
        [
          'resume',
          'wf',
          '-n',
          'ns',
          '--server',
          `http://127.0.0.1:${port}`,
          '--token',
          't',
          '-p',
          'a=1',
          '--set',
          'b=two=2',
          '--node',
          'approve',
        ],
        { from: 'user' },
      );
    } finally {
      console.log = log;
      process.exitCode = undefined;
      server.close();
    }
    expect(bodies).toEqual([
      { url: '/api/v1/workflows/ns/wf/resume', body: { nodeFieldSelector: 'displayName=approve', parameters: ['a=1', 'b=two=2'] } },
    ]);
  });
});
