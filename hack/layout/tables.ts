/** The tables hack/gen-layout.ts writes: pure, so their shape is tested without the tree. */

/** One layer of hack/layout/layers.cjs: its folders, each a description or {text, barrel}. */
export interface Layer {
  layer: string;
  folders: Record<string, string | { text: string; barrel?: boolean }>;
}

const text = (v: Layer['folders'][string]) => (typeof v === 'string' ? v : v.text);
const cell = (s: string) => s.replace(/\|/g, '\\|');

/** The README's layout table: the top layer first, as the layers stack. */
export function layoutTable(layers: readonly Layer[]): string {
  const rows = [...layers]
    .reverse()
    .flatMap((l) =>
      Object.entries(l.folders).map(
        ([folder, v]) =>
          `| ${cell(l.layer)} | \`src/${folder}/\`${typeof v === 'object' && v.barrel ? ' (index.ts)' : ''} | ${cell(text(v))} |`,
      ),
    );
  return ['| layer | folder | what it is |', '|---|---|---|', ...rows].join('\n');
}

/** A folder README's file table. */
export function fileTable(rows: ReadonlyArray<{ file: string; summary: string }>): string {
  return ['| file | what it is |', '|---|---|', ...rows.map((r) => `| \`${r.file}\` | ${cell(r.summary)} |`)].join('\n');
}

/** `doc` with the text between `<!-- name:begin … -->` and `<!-- name:end -->` replaced; undefined without the markers. */
export function replaceBlock(doc: string, name: string, body: string): string | undefined {
  const begin = new RegExp(`<!-- ${name}:begin[^>]*-->\\n`);
  const m = begin.exec(doc);
  const endMark = `<!-- ${name}:end -->`;
  if (!m) return undefined;
  const endAt = doc.indexOf(endMark, m.index);
  if (endAt < 0) return undefined;
  return `${doc.slice(0, m.index + m[0].length)}${body}\n${doc.slice(endAt)}`;
}
