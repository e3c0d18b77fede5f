import { mkdirSync, mkdtempSync, readFileSync, readdirSync, statSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { create } from 'tar';
import { describe, expect, it } from 'vitest';
import { entryProblem, placeArtifact } from './unpack.js';

/** A gzipped tar with raw entries, written by hand (tar libraries refuse to write hostile ones). */
function tarGz(entries: Array<{ name: string; type?: string; link?: string; body?: string }>): Buffer {
  const blocks: Buffer[] = [];
  for (const e of entries) {
    const body = Buffer.from(e.body ?? '');
    const h = Buffer.alloc(512);
    h.write(e.name, 0, 100);
    h.write('0000644\0', 100);
    h.write('0000000\0', 108);
    h.write('0000000\0', 116);
    h.write(`${body.length.toString(8).padStart(11, '0')}\0`, 124);
    h.write('00000000000\0', 136);
    h.write('        ', 148);
    h.write(e.type ?? '0', 156);
    if (e.link) h.write(e.link, 157, 100);
    h.write('ustar\u000000', 257);
    let sum = 0;
    for (const b of h) sum += b;
    h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148);
    blocks.push(h, body, Buffer.alloc((512 - (body.length % 512)) % 512));
  }
  blocks.push(Buffer.alloc(1024));
  return gzipSync(Buffer.concat(blocks));
}

const work = () => mkdtempSync(join(tmpdir(), 'plugflow-unpack-'));

describe('placing a fetched artifact', () => {
  it('unpacks a packed directory to the destination, and a packed file as a file', async () => {
    const dir = work();
    mkdirSync(join(dir, 'src', 'tree', 'sub'), { recursive: true });
    writeFileSync(join(dir, 'src', 'tree', 'sub', 'b'), 'B');
    writeFileSync(join(dir, 'src', 'one.txt'), 'one');
    await create({ gzip: true, file: join(dir, 'tree.tgz'), cwd: join(dir, 'src') }, ['tree']);
    await create({ gzip: true, file: join(dir, 'one.tgz'), cwd: join(dir, 'src') }, ['one.txt']);
    await placeArtifact(join(dir, 'tree.tgz'), join(dir, 'out-tree'), 'a');
    await placeArtifact(join(dir, 'one.tgz'), join(dir, 'out-one'), 'a', { mode: 0o600 });
    expect(readFileSync(join(dir, 'out-tree', 'sub', 'b'), 'utf8')).toBe('B');
    expect(readFileSync(join(dir, 'out-one'), 'utf8')).toBe('one');
    expect(statSync(join(dir, 'out-one')).mode & 0o777).toBe(0o600);
  });

  it('places plain and gzip-but-not-tar data as they are, and a subPath of an archive', async () => {
    const dir = work();
    writeFileSync(join(dir, 'plain'), 'hello');
    await placeArtifact(join(dir, 'plain'), join(dir, 'p'), 'a');
    expect(readFileSync(join(dir, 'p'), 'utf8')).toBe('hello');
    writeFileSync(join(dir, 'z.gz'), gzipSync('compressed text'));
    await placeArtifact(join(dir, 'z.gz'), join(dir, 'z'), 'a');
    expect(readFileSync(join(dir, 'z')).subarray(0, 2)).toEqual(Buffer.from([0x1f, 0x8b]));
    writeFileSync(
      join(dir, 't.tgz'),
      tarGz([
        { name: 'top/', type: '5' },
        { name: 'top/inner/', type: '5' },
        { name: 'top/inner/f', body: 'F' },
      ]),
    );
    await placeArtifact(join(dir, 't.tgz'), join(dir, 'sub'), 'a', { subPath: 'inner/f' });
    expect(readFileSync(join(dir, 'sub'), 'utf8')).toBe('F');
  });

  it.each([
    ['a parent path', [{ name: 'x/../../../evil', body: 'e' }], /entry "x\/..\/..\/..\/evil" would be written outside/],
    ['an absolute path', [{ name: '/tmp/evil', body: 'e' }], /entry "\/tmp\/evil" would be written outside/],
    ['an escaping symbolic link', [{ name: 'x/l', type: '2', link: '../../..' }], /symbolic link "x\/l" points outside/],
    ['an absolute symbolic link', [{ name: 'x/l', type: '2', link: '/etc/passwd' }], /symbolic link "x\/l" points outside/],
    ['an escaping hard link', [{ name: 'x/h', type: '1', link: '../../etc/passwd' }], /hard link "x\/h" points outside/],
    ['a device', [{ name: 'x/d', type: '3' }], /is a CharacterDevice/],
  ])('refuses %s and leaves nothing at the destination', async (_what, entries, message) => {
    const dir = work();
    writeFileSync(join(dir, 'bad.tgz'), tarGz(entries));
    await expect(placeArtifact(join(dir, 'bad.tgz'), join(dir, 'dest'), 'input artifact "in"')).rejects.toThrow(message);
    expect(existsSync(join(dir, 'dest'))).toBe(false);
    expect(readdirSync(dir).sort()).toEqual(['bad.tgz']);
  });

  it('stops a tar bomb at the entry limit', async () => {
    const dir = work();
    writeFileSync(join(dir, 'many.tgz'), tarGz(Array.from({ length: 20 }, (_, i) => ({ name: `x/f${i}`, body: 'x' }))));
    await expect(placeArtifact(join(dir, 'many.tgz'), join(dir, 'dest'), 'a', { maxEntries: 10 })).rejects.toThrow(/more than 10 entries/);
  });

  it('keeps links that stay inside', () => {
    expect(entryProblem('x/a/l', 'SymbolicLink', '../b')).toBeUndefined();
    expect(entryProblem('x/a/l', 'SymbolicLink', '../../y')).toBeUndefined();
    expect(entryProblem('x/l', 'SymbolicLink', '../../y')).toMatch(/points outside/);
  });
});
