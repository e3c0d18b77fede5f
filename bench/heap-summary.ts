/**
 * What a V8 heap snapshot holds: bytes by kind (code, strings, objects by constructor, arrays,
 * closures…), largest first, so that "what dominates the controller's memory" can be read
 * without DevTools. Self sizes only (no retainer analysis): a snapshot's total is the JS heap in
 * use, which is part of the RSS (the rest is V8's reserved space, Node's own and native memory).
 *
 *   node --heapsnapshot-signal=SIGUSR2 bin/plugflow.js controller …   then   kill -USR2 <pid>
 *   npx tsx bench/heap-summary.ts FILE.heapsnapshot                     (TOP=25 rows)
 */
import { readFileSync } from 'node:fs';

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
  strings: string[];
}

export function summariseHeap(snap: Snapshot): { total: number; rows: [string, number, number][] } {
  const fields = snap.snapshot.meta.node_fields;
  const types = snap.snapshot.meta.node_types[0];
  const width = fields.length;
  const typeAt = fields.indexOf('type');
  const nameAt = fields.indexOf('name');
  const sizeAt = fields.indexOf('self_size');
  const bytes = new Map<string, [number, number]>();
  let total = 0;
  for (let i = 0; i < snap.nodes.length; i += width) {
    const type = types[snap.nodes[i + typeAt]!]!;
    const size = snap.nodes[i + sizeAt]!;
    total += size;
    // Objects by constructor; everything else by its kind (code, string, closure, array…).
    const key = type === 'object' ? `object ${snap.strings[snap.nodes[i + nameAt]!]}` : type;
    const row = bytes.get(key) ?? [0, 0];
    row[0] += size;
    row[1]++;
    bytes.set(key, row);
  }
  const rows = [...bytes].map(([k, [b, n]]): [string, number, number] => [k, b, n]).sort((a, b) => b[1] - a[1]);
  return { total, rows };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const file of process.argv.slice(2)) {
    const { total, rows } = summariseHeap(JSON.parse(readFileSync(file, 'utf8')) as Snapshot);
    const mib = (b: number) => (b / 1048576).toFixed(1).padStart(6);
    console.log(`== ${file}: ${mib(total)} MiB of JS heap in use`);
    for (const [k, b, n] of rows.slice(0, Number(process.env.TOP ?? 25)))
      console.log(`${mib(b)} MiB  ${((100 * b) / total).toFixed(1).padStart(5)} %  ${String(n).padStart(8)}  ${k}`);
  }
}
