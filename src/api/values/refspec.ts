/** Git refspecs as the git artifact's `fetch` takes them. Pure: validation uses it too. */

export class RefspecError extends Error {}

/** A refspec `[+]SRC[:DST]`; `*` (once, in both or neither) maps many refs. */
export function parseRefspec(spec: string): { src: string; dst: string; glob: boolean } {
  const m = /^\+?([^:\s]+)(?::([^:\s]+))?$/.exec(spec);
  if (!m) throw new RefspecError(`fetch refspec ${JSON.stringify(spec)} is not [+]SRC[:DST]`);
  const src = m[1]!;
  const dst = m[2] ?? src;
  const stars = [src, dst].map((r) => r.split('*').length - 1);
  if (stars[0]! > 1 || stars[0] !== stars[1])
    throw new RefspecError(`fetch refspec ${JSON.stringify(spec)}: use one * in both sides, or none`);
  if (!src.startsWith('refs/') || !dst.startsWith('refs/'))
    throw new RefspecError(`fetch refspec ${JSON.stringify(spec)}: name full refs (refs/…)`);
  return { src, dst, glob: stars[0] === 1 };
}
