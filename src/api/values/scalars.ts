/**
 * Scalar types the spec names. They are aliases of JSON primitives, kept as named types so a
 * reader can tell an IntOrString field from a plain string and find the parser for it.
 */

/** An integer or a string (for example `3`, `"3"` or `"{{inputs.parameters.n}}"`). */
export type IntOrString = number | string;

/**
 * On input: int, float, boolean or string; held and written back as a string.
 * Records accept the wide input form; `anyStringToString` gives the canonical string.
 */
export type AnyString = string | number | boolean;

/** A resource quantity such as `500m`, `1.5Gi`, `1e3`. YAML may give a bare number. */
export type Quantity = string | number;

/** A duration string such as `2m`, `1h30m`, `500ms` (Go style). */
export type DurationString = string;
