import { mkdirSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, statSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { create } from 'tar';
import { describe, expect, it } from 'vitest';
import { tarGz, zipStored } from '../../test/support/archives.js';
import { entryProblem, placeArtifact } from './unpack.js';

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

describe('symbolic links judged where the artifact is placed', () => {
  const place = async (entries: Parameters<typeof tarGz>[0], opts: { subPath?: string } = {}) => {
    const dir = work();
    writeFileSync(join(dir, 'a.tgz'), tarGz(entries));
    const dest = join(dir, 'dest');
    const placing = placeArtifact(join(dir, 'a.tgz'), dest, 'input artifact "in"', opts);
    return { dir, dest, placing };
  };

  it('refuses a link that stays in the archive but climbs one level above the destination, placing nothing', async () => {
    // Inside the archive `top/dir/link -> ../../x` names `x` beside `top`; `top` becomes the destination.
    const { dir, placing } = await place([
      { name: 'top/', type: '5' },
      { name: 'top/dir/', type: '5' },
      { name: 'top/dir/link', type: '2', link: '../../x' },
    ]);
    await expect(placing).rejects.toThrow(
      /input artifact "in": the archive was refused and nothing was placed: symbolic link "top\/dir\/link" points outside the artifact's destination once placed \("\.\.\/\.\.\/x"\)/,
    );
    expect(readdirSync(dir).sort()).toEqual(['a.tgz']);
  });

  it('refuses a single top-level entry that is itself a link (it would be resolved beside the destination)', async () => {
    const { dir, placing } = await place([{ name: 'l', type: '2', link: 'x' }]);
    await expect(placing).rejects.toThrow(/symbolic link "l" points outside the artifact's destination/);
    expect(readdirSync(dir).sort()).toEqual(['a.tgz']);
  });

  it('keeps a link inside the top-level directory', async () => {
    const { dest, placing } = await place([
      { name: 'top/', type: '5' },
      { name: 'top/f', body: 'F' },
      { name: 'top/dir/', type: '5' },
      { name: 'top/dir/link', type: '2', link: '../f' },
    ]);
    await placing;
    expect(readlinkSync(join(dest, 'dir', 'link'))).toBe('../f');
    expect(readFileSync(join(dest, 'dir', 'link'), 'utf8')).toBe('F');
  });

  it('keeps a link between top-level entries of an archive with several (the staging directory is the destination)', async () => {
    const { dir, dest, placing } = await place([
      { name: 'a/', type: '5' },
      { name: 'a/f', body: 'F' },
      { name: 'b', type: '2', link: 'a/f' },
    ]);
    await placing;
    expect(readdirSync(dest).sort()).toEqual(['a', 'b']);
    expect(readFileSync(join(dest, 'b'), 'utf8')).toBe('F');
    expect(readdirSync(dir).sort()).toEqual(['a.tgz', 'dest']);
  });

  it('refuses a subPath landing on a directory whose link climbs out of it', async () => {
    const { dir, placing } = await place(
      [
        { name: 'top/', type: '5' },
        { name: 'top/f', body: 'F' },
        { name: 'top/sub/', type: '5' },
        { name: 'top/sub/link', type: '2', link: '../f' },
      ],
      { subPath: 'sub' },
    );
    await expect(placing).rejects.toThrow(
      /symbolic link "top\/sub\/link" points outside the artifact's destination once placed \("\.\.\/f"\)/,
    );
    expect(readdirSync(dir).sort()).toEqual(['a.tgz']);
  });

  it('leaves no staging directory behind when the subPath is missing', async () => {
    const { dir, placing } = await place([{ name: 'top/f', body: 'F' }], { subPath: 'nope' });
    await expect(placing).rejects.toThrow(/subPath "nope" does not exist in the artifact/);
    expect(readdirSync(dir).sort()).toEqual(['a.tgz']);
  });
});

describe('an input that says archive: zip', () => {
  it('is unzipped into the directory at its path, keeping subdirectories and the executable bit', async () => {
    const dir = work();
    writeFileSync(
      join(dir, 'in.zip'),
      zipStored([{ name: 'docs/' }, { name: 'docs/readme.txt', body: 'read me' }, { name: 'run.sh', body: '#!/bin/sh\n', mode: 0o100755 }]),
    );
    await placeArtifact(join(dir, 'in.zip'), join(dir, 'dest'), 'a', { archive: 'zip' });
    expect(readFileSync(join(dir, 'dest', 'docs', 'readme.txt'), 'utf8')).toBe('read me');
    expect(statSync(join(dir, 'dest', 'run.sh')).mode & 0o777).toBe(0o755);
    expect(readdirSync(dir).sort()).toEqual(['dest', 'in.zip']);
  });

  it.each([
    ['a parent path', [{ name: '../evil', body: 'e' }], /invalid relative path|would be written outside/],
    ['an absolute path', [{ name: '/tmp/evil', body: 'e' }], /absolute path|would be written outside/],
    ['a symbolic link', [{ name: 'l', body: '/etc/passwd', mode: 0o120777 }], /entry "l" is a link or special file/],
    ['a file that is not a zip', undefined, /not a zip archive/],
  ])('refuses %s and leaves nothing at the destination', async (_what, entries, message) => {
    const dir = work();
    writeFileSync(join(dir, 'bad.zip'), entries ? zipStored(entries) : 'plain text');
    await expect(placeArtifact(join(dir, 'bad.zip'), join(dir, 'dest'), 'input artifact "in"', { archive: 'zip' })).rejects.toThrow(
      message,
    );
    expect(readdirSync(dir).sort()).toEqual(['bad.zip']);
  });

  it('refuses a zip whose entries are more than the limit', async () => {
    const dir = work();
    writeFileSync(join(dir, 'many.zip'), zipStored([{ name: 'a' }, { name: 'b' }, { name: 'c' }]));
    await expect(placeArtifact(join(dir, 'many.zip'), join(dir, 'dest'), 'x', { archive: 'zip', maxEntries: 2 })).rejects.toThrow(
      /x: the zip archive was refused and nothing was placed: it has more than 2 entries/,
    );
  });

  it('places an input that says archive: none as fetched, even a tarball', async () => {
    const dir = work();
    writeFileSync(join(dir, 't.tgz'), tarGz([{ name: 'f', body: 'F' }]));
    await placeArtifact(join(dir, 't.tgz'), join(dir, 'dest'), 'a', { archive: 'none' });
    expect(readFileSync(join(dir, 'dest')).subarray(0, 2)).toEqual(Buffer.from([0x1f, 0x8b]));
  });
});
