import type { EvalContext } from './context.js';
import { isMap, typeName, type Value } from './values.js';

/**
 * `sprig.date(layout, t)`: formats a time with a Go layout (the reference time
 * `Mon Jan 2 15:04:05 MST 2006`, e.g. `"2006-01-02"`). Sprig takes a time or Unix seconds and
 * formats in the process's local zone, and gives the current time for anything else. Here results
 * must not depend on the clock or the host: `t` is Unix seconds (int or float) or an RFC 3339
 * timestamp (what `workflow.creationTimestamp` holds), anything else is an error, and the zone is
 * always UTC (the zone of the peer's controller image).
 *
 * In an expression `workflow.creationTimestamp` is a map of its forms (`RFC3339`, `s`, `Y`, …:
 * the variables `workflow.creationTimestamp.*` make it one), so a map holding an `RFC3339` string
 * is read as that time — the peer's `expression-tag-template` example formats it so.
 */

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

/** Dates JS can represent: ±8.64e15 ms around the epoch. */
const MAX_SECONDS = 8.64e12;

interface Instant {
  ms: number;
  /** Nanoseconds within the second (RFC 3339 fractions keep up to 9 digits). */
  nanos: number;
}

export function sprigDate(c: EvalContext, layout: string, t: Value): string {
  c.charge(layout.length); // the layout is read character by character
  const at = instant(c, t);
  return formatLayout(layout, new Date(at.ms), at.nanos);
}

function instant(c: EvalContext, t: Value): Instant {
  if (typeof t === 'bigint' || typeof t === 'number') {
    const secs = typeof t === 'bigint' ? Number(t) : Math.trunc(t);
    if (!Number.isFinite(secs) || Math.abs(secs) > MAX_SECONDS)
      return c.fail('call', `sprig.date: ${String(t)} seconds is out of the range of dates`);
    return { ms: secs * 1000, nanos: 0 };
  }
  if (typeof t === 'string') {
    const m = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?([Zz]|[+-]\d{2}:\d{2})$/.exec(t);
    if (m) {
      const [, y, mo, d, h, mi, s, frac, zone] = m;
      let ms = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s));
      if (zone !== 'Z' && zone !== 'z') {
        const sign = zone[0] === '-' ? -1 : 1;
        ms -= sign * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(4, 6))) * 60_000;
      }
      if (!Number.isNaN(ms)) return { ms, nanos: frac ? Number(frac.padEnd(9, '0')) : 0 };
    }
    return c.fail(
      'call',
      `sprig.date: ${JSON.stringify(t.length > 40 ? t.slice(0, 40) + '…' : t)} is not an RFC 3339 time (e.g. "2024-05-01T10:00:00Z")`,
    );
  }
  const rfc3339 = isMap(t) && Object.hasOwn(t, 'RFC3339') ? t.RFC3339 : undefined;
  if (typeof rfc3339 === 'string') return instant(c, rfc3339);
  return c.fail('type', `sprig.date: argument 2 must be Unix seconds or an RFC 3339 time string, got ${typeName(t)}`);
}

const pad = (n: number, width: number, ch = '0'): string => String(n).padStart(width, ch);

/** Go's Time.Format for a UTC time: the layout's reference-time chunks are replaced, the rest kept. */
export function formatLayout(layout: string, d: Date, nanos: number): string {
  const out: string[] = [];
  let i = 0;
  const year = d.getUTCFullYear();
  const month = d.getUTCMonth();
  const day = d.getUTCDate();
  const hour = d.getUTCHours();
  const yday = Math.floor((Date.UTC(year, month, day) - Date.UTC(year, 0, 1)) / 86_400_000) + 1;
  const at = (s: string): boolean => layout.startsWith(s, i);
  const lowerAfter = (n: number): boolean => /[a-z]/.test(layout[i + n] ?? '');
  while (i < layout.length) {
    const ch = layout[i];
    let take = 0;
    let text = '';
    if (ch === 'J' && at('January')) [take, text] = [7, MONTHS[month]];
    else if (ch === 'J' && at('Jan') && !lowerAfter(3)) [take, text] = [3, MONTHS[month].slice(0, 3)];
    else if (ch === 'M' && at('Monday')) [take, text] = [6, DAYS[d.getUTCDay()]];
    else if (ch === 'M' && at('Mon') && !lowerAfter(3)) [take, text] = [3, DAYS[d.getUTCDay()].slice(0, 3)];
    else if (ch === 'M' && at('MST')) [take, text] = [3, 'UTC'];
    else if (ch === '0' && at('002')) [take, text] = [3, pad(yday, 3)];
    else if (ch === '0' && /[1-6]/.test(layout[i + 1] ?? '')) {
      take = 2;
      text = [
        pad(month + 1, 2),
        pad(day, 2),
        pad(hour % 12 || 12, 2),
        pad(d.getUTCMinutes(), 2),
        pad(d.getUTCSeconds(), 2),
        pad(year % 100, 2),
      ][Number(layout[i + 1]) - 1];
    } else if (ch === '1' && at('15')) [take, text] = [2, pad(hour, 2)];
    else if (ch === '1') [take, text] = [1, String(month + 1)];
    else if (ch === '2' && at('2006')) [take, text] = [4, pad(year, 4)];
    else if (ch === '2') [take, text] = [1, String(day)];
    else if (ch === '_' && at('_2006')) [take, text] = [5, '_' + pad(year, 4)];
    else if (ch === '_' && at('__2')) [take, text] = [3, pad(yday, 3, ' ')];
    else if (ch === '_' && at('_2')) [take, text] = [2, pad(day, 2, ' ')];
    else if (ch === '3') [take, text] = [1, String(hour % 12 || 12)];
    else if (ch === '4') [take, text] = [1, String(d.getUTCMinutes())];
    else if (ch === '5') [take, text] = [1, String(d.getUTCSeconds())];
    else if (ch === 'P' && at('PM')) [take, text] = [2, hour >= 12 ? 'PM' : 'AM'];
    else if (ch === 'p' && at('pm')) [take, text] = [2, hour >= 12 ? 'pm' : 'am'];
    else if (ch === '-' || ch === 'Z') {
      // Numeric zones; in UTC the ISO 8601 forms (Z…) print "Z".
      for (const z of ['070000', '07:00:00', '0700', '07:00', '07']) {
        if (layout.startsWith(z, i + 1)) {
          take = z.length + 1;
          text = ch === 'Z' ? 'Z' : '+' + z.replace(/\d/g, '0');
          break;
        }
      }
    } else if ((ch === '.' || ch === ',') && (layout[i + 1] === '0' || layout[i + 1] === '9')) {
      const digit = layout[i + 1];
      let j = i + 1;
      while (layout[j] === digit) j++;
      if (!/\d/.test(layout[j] ?? '')) {
        take = j - i;
        const frac = pad(nanos, 9).slice(0, Math.min(9, j - i - 1));
        text = digit === '0' ? ch + frac : frac.replace(/0+$/, '') === '' ? '' : ch + frac.replace(/0+$/, '');
      }
    }
    if (take === 0) {
      out.push(ch);
      i++;
    } else {
      out.push(text);
      i += take;
    }
  }
  return out.join('');
}
