/**
 * What an untagged plain YAML scalar means to kubectl. kubectl turns YAML into JSON with
 * sigs.k8s.io/yaml, whose resolver is go-yaml v2's: YAML 1.1 booleans including `y`/`n`,
 * `yes`/`no`, `on`/`off`; 0-prefixed octal and 0x/0o/0b integers with `_` separators; floats only
 * in decimal form; timestamps (and anything else) stay strings. Quoted and block scalars are always strings; this
 * module decides only plain ones, so "what is a number" is answered in one place.
 */

/** The resolved form of a plain scalar. `float` is kept apart from `int` for map keys. */
export type GoScalar = { t: 'null' } | { t: 'bool'; v: boolean } | { t: 'int'; v: bigint } | { t: 'float'; v: number } | { t: 'str' };

const TABLE: ReadonlyMap<string, GoScalar> = new Map<string, GoScalar>([
  ...['y', 'Y', 'yes', 'Yes', 'YES', 'true', 'True', 'TRUE', 'on', 'On', 'ON'].map((s): [string, GoScalar] => [s, { t: 'bool', v: true }]),
  ...['n', 'N', 'no', 'No', 'NO', 'false', 'False', 'FALSE', 'off', 'Off', 'OFF'].map((s): [string, GoScalar] => [
    s,
    { t: 'bool', v: false },
  ]),
  ...['', '~', 'null', 'Null', 'NULL'].map((s): [string, GoScalar] => [s, { t: 'null' }]),
  ...['.nan', '.NaN', '.NAN'].map((s): [string, GoScalar] => [s, { t: 'float', v: Number.NaN }]),
  ...['.inf', '.Inf', '.INF', '+.inf', '+.Inf', '+.INF'].map((s): [string, GoScalar] => [s, { t: 'float', v: Infinity }]),
  ...['-.inf', '-.Inf', '-.INF'].map((s): [string, GoScalar] => [s, { t: 'float', v: -Infinity }]),
]);

/** go-yaml only tries a number when the first character can start one. */
const NUMBER_START = /^[-+0-9.]/;
/** go-yaml's `yamlStyleFloat`. */
const YAML_FLOAT = /^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/;

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const UINT64_MAX = 2n ** 64n - 1n;

/** Resolves an untagged plain scalar the way go-yaml v2 does. */
export function resolvePlain(text: string): GoScalar {
  const known = TABLE.get(text);
  if (known) return known;
  if (!NUMBER_START.test(text)) return { t: 'str' };
  if (text.startsWith('.')) {
    // Go's ParseFloat on a leading dot accepts only `.digits[exponent]`.
    return /^\.[0-9]+([eE][-+]?[0-9]+)?$/.test(text) ? finite(Number(text)) : { t: 'str' };
  }
  const plain = text.replaceAll('_', '');
  const int = parseGoInt(plain);
  if (int !== undefined) return { t: 'int', v: int };
  if (YAML_FLOAT.test(plain)) return finite(Number(plain));
  return { t: 'str' };
}

/** Go's strconv.ParseInt(s, 0, 64) syntax: sign, then 0x / 0o / 0b / leading-0 octal / decimal. */
function parseGoInt(s: string): bigint | undefined {
  const m = /^([-+]?)(0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)$/.exec(s);
  if (!m) return undefined;
  let body = m[2]!;
  if (/^0[0-7]+$/.test(body)) body = `0o${body.slice(1)}`;
  const v = BigInt(body.toLowerCase());
  const signed = m[1] === '-' ? -v : v;
  if (signed >= INT64_MIN && signed <= INT64_MAX) return signed;
  // ParseUint, tried next, takes no sign.
  return m[1] === '' && signed <= UINT64_MAX ? signed : undefined;
}

/** A float literal Go cannot represent (out of range) stays a string, as it does in go-yaml. */
function finite(v: number): GoScalar {
  return Number.isFinite(v) ? { t: 'float', v } : { t: 'str' };
}

/**
 * A float used as a map key, spelled as sigs.k8s.io/yaml spells it: Go's
 * `strconv.FormatFloat(f, 'g', -1, 32)` (shortest float32 digits, exponent form below 1e-4 and
 * from 1e6), with `.inf`/`-.inf`/`.nan` for the specials.
 */
export function goFloatKey(f: number): string {
  if (Number.isNaN(f)) return '.nan';
  if (f === Infinity) return '.inf';
  if (f === -Infinity) return '-.inf';
  const f32 = Math.fround(f);
  if (f32 === 0) return Object.is(f32, -0) ? '-0' : '0';
  let exp = '';
  for (let p = 1; p <= 9; p++) {
    exp = f32.toExponential(p - 1);
    if (Math.fround(Number(exp)) === f32) break;
  }
  const [mantissa, e] = exp.split('e') as [string, string];
  const x = Number(e);
  if (x < -4 || x >= 6) return `${mantissa}e${x < 0 ? '-' : '+'}${String(Math.abs(x)).padStart(2, '0')}`;
  const digits = mantissa.replace('-', '').replace('.', '');
  const sign = mantissa.startsWith('-') ? '-' : '';
  if (x >= 0) {
    const intPart = digits.slice(0, x + 1).padEnd(x + 1, '0');
    const frac = digits.slice(x + 1);
    return `${sign}${intPart}${frac ? `.${frac}` : ''}`;
  }
  return `${sign}0.${'0'.repeat(-x - 1)}${digits}`;
}
