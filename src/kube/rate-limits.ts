/**
 * The two small structures every request guard here needs: a bounded cache of verdicts, and a
 * token bucket. Shared by the server's authenticator (src/server/auth.ts) and the controller's
 * metrics guard (request-authorizer.ts), so a flood of made-up tokens costs neither of them
 * unbounded memory nor the API server unbounded reviews.
 */

/**
 * A Map of at most `max` entries; beyond it the oldest entry goes. Not reordered on reads: every
 * entry is rewritten within its TTL anyway (10 s), so the order of writes is the order of use
 * that matters, and a read stays a plain Map lookup on the event path.
 */
export class BoundedCache<V> {
  private readonly map = new Map<string, V>();
  constructor(private readonly max: number) {}
  get size(): number {
    return this.map.size;
  }
  get(key: string): V | undefined {
    return this.map.get(key);
  }
  set(key: string, v: V): void {
    this.map.delete(key);
    this.map.set(key, v);
    if (this.map.size > this.max) this.map.delete(this.map.keys().next().value!);
  }
}

/** `rate` tokens a second up to `burst`; `take` spends one if there is one. */
export class TokenBucket {
  private tokens: number;
  private last = 0;
  constructor(
    private readonly rate: number,
    private readonly burst: number,
  ) {
    this.tokens = burst;
  }
  take(now = Date.now()): boolean {
    if (this.last > 0) this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.rate);
    this.last = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}
