import { createHash } from 'node:crypto';
import { Transform } from 'node:stream';

/**
 * A pass-through stream that counts the bytes of an upload and hashes them (sha256) on the way, so
 * the wait side can log both without reading the file twice.
 */
export function measuring(): { through: Transform; result(): { size: number; sha256: string } } {
  const hash = createHash('sha256');
  let size = 0;
  const through = new Transform({
    transform(chunk: Buffer, _enc, done) {
      hash.update(chunk);
      size += chunk.length;
      done(null, chunk);
    },
  });
  return { through, result: () => ({ size, sha256: hash.digest('hex') }) };
}
