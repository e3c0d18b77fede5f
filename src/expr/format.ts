import { isMap, sortedKeys, typeName, type Meter, type Value } from './values.js';

/**
 * Text forms of values. Three are needed because the peer system uses three:
 * - `formatGo` is Go's `fmt.Sprintf("%v", v)`, used by `string(...)` and `sprig.toString`
 *   (`3.0` prints as `3`, `1e6` as `1e+06`, lists as `[a b]`, maps as `map[k:v]`);
 * - `toJson` is Go's `json.Marshal` (compact, map keys sorted), used for event values, template
 *   results and `toJson`;
 * - `toJson(v, '  ')` is the indented form of expr-lang's `toJSON`.
 * All walk values with a depth limit and charge the budget, so a hostile payload cannot make
 * them recurse without end or build unbounded strings.
 */

/** Go's %v for a float64: shortest digits, exponent form below 1e-4 and from 1e6 on (`1e+06`). */
export function formatGoFloat(x: number): string {
  if (Number.isNaN(x)) return 'NaN';
  if (x === Infinity) return '+Inf';
  if (x === -Infinity) return '-Inf';
  if (x === 0) return Object.is(x, -0) ? '-0' : '0';
  const ax = Math.abs(x);
  if (ax >= 1e-4 && ax < 1e6) return String(x); // fixed notation: JS and Go print the same digits
  const [mant, expText] = x.toExponential().split('e');
  const exp = Number(expText);
  if (exp < -4 || exp >= 6) {
    const sign = exp < 0 ? '-' : '+';
    const digits = String(Math.abs(exp)).padStart(2, '0');
    return `${mant}e${sign}${digits}`;
  }
  // Fixed notation with the shortest digits: JS prints these the same way in this range.
  return String(x);
}

export function formatGo(v: Value, meter: Meter, depth = 0): string {
  if (v === null || v === undefined) return '<nil>';
  switch (typeof v) {
    case 'string':
      return v;
    case 'boolean':
      return v ? 'true' : 'false';
    case 'bigint':
      return v.toString();
    case 'number':
      meter.charge(2); // a few string operations per float
      return formatGoFloat(v);
    default:
      break;
  }
  if (depth >= meter.maxValueDepth) meter.limit(`value is nested more than ${meter.maxValueDepth} levels deep`);
  const out = new Builder(meter);
  if (Array.isArray(v)) {
    meter.charge(v.length);
    out.push('[');
    v.forEach((item, i) => {
      if (i > 0) out.push(' ');
      out.push(formatGo(item, meter, depth + 1));
    });
    out.push(']');
    return out.toString();
  }
  if (isMap(v)) {
    const keys = sortedKeys(meter, v);
    out.push('map[');
    keys.forEach((k, i) => {
      if (i > 0) out.push(' ');
      out.push(k);
      out.push(':');
      out.push(formatGo(v[k], meter, depth + 1));
    });
    out.push(']');
    return out.toString();
  }
  return `<${typeof v}>`;
}

/**
 * JSON text of a value, like Go's json.Marshal: map keys sorted, ints exact, floats in the
 * shortest form (JS and Go agree on it), no HTML escaping. Infinity and NaN cannot be encoded.
 */
export function toJson(v: Value, meter: Meter, indent = ''): string {
  const out = new Builder(meter);
  writeJson(v, meter, indent, '', 0, out);
  return out.toString();
}

function writeJson(v: Value, meter: Meter, indent: string, prefix: string, depth: number, out: Builder): void {
  if (v === null || v === undefined) return out.push('null');
  switch (typeof v) {
    case 'string':
      return out.push(JSON.stringify(v));
    case 'boolean':
      return out.push(v ? 'true' : 'false');
    case 'bigint':
      return out.push(v.toString());
    case 'number':
      if (!Number.isFinite(v)) meter.limit(`cannot encode ${formatGoFloat(v)} as JSON`);
      return out.push(Object.is(v, -0) ? '-0' : String(v));
    default:
      break;
  }
  if (depth >= meter.maxValueDepth) meter.limit(`value is nested more than ${meter.maxValueDepth} levels deep`);
  const inner = prefix + indent;
  const nl = indent ? '\n' : '';
  if (Array.isArray(v)) {
    meter.charge(v.length + 1);
    if (v.length === 0) return out.push('[]');
    out.push('[');
    v.forEach((item, i) => {
      if (i > 0) out.push(',');
      out.push(nl + (indent ? inner : ''));
      writeJson(item, meter, indent, inner, depth + 1, out);
    });
    out.push(nl + (indent ? prefix : '') + ']');
    return;
  }
  if (isMap(v)) {
    const keys = sortedKeys(meter, v);
    meter.charge(1);
    if (keys.length === 0) return out.push('{}');
    out.push('{');
    keys.forEach((k, i) => {
      if (i > 0) out.push(',');
      out.push(nl + (indent ? inner : ''));
      out.push(JSON.stringify(k));
      out.push(indent ? ': ' : ':');
      writeJson(v[k], meter, indent, inner, depth + 1, out);
    });
    out.push(nl + (indent ? prefix : '') + '}');
    return;
  }
  meter.limit(`cannot encode a value of type ${typeof v} as JSON`);
}

/** Collects string parts and enforces the string length limit as it grows. */
class Builder {
  private parts: string[] = [];
  private length = 0;
  constructor(private readonly meter: Meter) {}
  push(s: string): void {
    this.length += s.length;
    if (this.length > this.meter.maxStringLength)
      this.meter.limit(`result string would be longer than ${this.meter.maxStringLength} characters`);
    this.parts.push(s);
  }
  toString(): string {
    return this.parts.join('');
  }
}

/** A bounded preview for messages: never walks more than a few levels or characters. */
export function previewValue(v: Value, max = 60): string {
  const out: string[] = [];
  let budget = max + 1;
  const push = (s: string): boolean => {
    out.push(s);
    budget -= s.length;
    return budget > 0;
  };
  const walk = (x: Value, depth: number): boolean => {
    if (x === null || x === undefined) return push('nil');
    switch (typeof x) {
      case 'string':
        return push(JSON.stringify(x.length > max ? x.slice(0, max) : x));
      case 'bigint':
        return push(x.toString());
      case 'number':
        return push(formatGoFloat(x));
      case 'boolean':
        return push(String(x));
      default:
        break;
    }
    if (depth > 3) return push('…');
    if (Array.isArray(x)) {
      if (!push('[')) return false;
      for (let i = 0; i < x.length; i++) {
        if (i > 0 && !push(',')) return false;
        if (!walk(x[i], depth + 1)) return false;
      }
      return push(']');
    }
    if (isMap(x)) {
      if (!push('{')) return false;
      let first = true;
      for (const k of Object.keys(x)) {
        if (!first && !push(',')) return false;
        first = false;
        if (!push(JSON.stringify(k) + ':')) return false;
        if (!walk(x[k], depth + 1)) return false;
      }
      return push('}');
    }
    return push(`<${typeof x}>`);
  };
  walk(v, 0);
  let text = out.join('');
  if (text.length > max) text = text.slice(0, max - 1) + '…';
  return text;
}

/**
 * "string of 40 bytes", "map of 3 keys", "list of 2 items", "float", "nil": a value's type and
 * size, never the value itself. Error messages describe runtime values with this: they reach
 * logs and Warning Events, and a value may come from an event payload (a token, a password).
 */
export function describeValue(v: Value): string {
  const t = typeName(v);
  if (typeof v === 'string') return `string of ${Buffer.byteLength(v)} bytes`;
  if (Array.isArray(v)) return `${t} of ${v.length} items`;
  if (isMap(v)) return `${t} of ${Object.keys(v).length} keys`;
  return t;
}
