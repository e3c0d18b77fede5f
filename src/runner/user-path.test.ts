import { describe, expect, it } from 'vitest';
import { pathForUser, reachableByOthers } from './user-path.js';

const modes: Record<string, number> = {
  '/root': 0o700,
  '/root/.pyenv': 0o755,
  '/root/.pyenv/shims': 0o755,
  '/usr': 0o755,
  '/usr/bin': 0o755,
  '/opt': 0o755,
  '/opt/private': 0o750,
};
const stat = (p: string) => {
  if (!(p in modes)) throw new Error(`ENOENT ${p}`);
  return { mode: modes[p] };
};

describe('PATH for non-root containers', () => {
  it('drops directories behind one that others cannot search, and missing or relative ones', () => {
    expect(reachableByOthers('/root/.pyenv/shims', stat)).toBe(false);
    expect(reachableByOthers('/usr/bin', stat)).toBe(true);
    expect(reachableByOthers('/opt/private', stat)).toBe(false);
    expect(reachableByOthers('/nope', stat)).toBe(false);
    expect(reachableByOthers('bin', stat)).toBe(false);
    expect(pathForUser('/root/.pyenv/shims:/usr/bin:/opt/private', 4242, stat)).toBe('/usr/bin');
  });

  it('keeps root containers as they are, and falls back to a system PATH when nothing is left', () => {
    expect(pathForUser('/root/.pyenv/shims:/usr/bin', 0, stat)).toBe('/root/.pyenv/shims:/usr/bin');
    expect(pathForUser('/root/.pyenv/shims:/usr/bin', undefined, stat)).toBe('/root/.pyenv/shims:/usr/bin');
    expect(pathForUser('/root/.pyenv/shims', 1000, stat)).toBe('/usr/local/bin:/usr/bin:/bin');
  });
});
