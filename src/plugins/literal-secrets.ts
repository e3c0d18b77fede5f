/**
 * Spotting secrets written as literal env values in a plugin declaration. Secrets must come
 * through `env[].valueFrom.secretKeyRef` (spec document 000, sidecar rule 4): a declaration is
 * published as a ConfigMap that anyone with read access to the namespace can see.
 *
 * A refusal blocks a legitimate build, so only what really is a credential is refused:
 *  1. values in a format that is a credential whatever the variable is called (PEM private
 *     keys, well-known provider token prefixes, JWTs, URLs with a password);
 *  2. under a name that *ends* in a secret word (`API_KEY`, `GITHUB_TOKEN`, `CLIENT_SECRET`), a
 *     value that looks machine-generated: long, without word structure, mixing character kinds
 *     (hex or base64 keys, random tokens, UUIDs).
 * Any other literal value under such a name only draws a warning: published plugins commonly
 * pass the *name* or *key* of a Secret that way (`GITHUB_TOKEN_SECRET: github-token`,
 * `SECRET_KEY: token`). Names that merely point at a secret (`TOKEN_PATH`, `SECRET_NAME`) or
 * count things (`MAX_TOKENS`) are not secret names, and values that cannot be a credential
 * (empty, booleans, numbers, absolute paths, `$(VAR)` references) never draw anything.
 */

/** Credential formats recognisable from the value alone. */
const SECRET_FORMATS: ReadonlyArray<{ what: string; re: RegExp }> = [
  { what: 'a PEM private key', re: /-----BEGIN [A-Z ]*PRIVATE KEY-----/ },
  { what: 'an AWS access key id', re: /\b(AKIA|ASIA)[0-9A-Z]{16}\b/ },
  { what: 'a GitHub token', re: /\b(ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,}\b|\bgithub_pat_[A-Za-z0-9_]{22,}\b/ },
  { what: 'a GitLab token', re: /\bglpat-[A-Za-z0-9_-]{20,}\b/ },
  { what: 'a Slack token', re: /\bxox[abposr]-[A-Za-z0-9-]{10,}\b/ },
  { what: 'a Stripe secret key', re: /\b[rs]k_live_[A-Za-z0-9]{16,}\b/ },
  { what: 'a Google API key', re: /\bAIza[0-9A-Za-z_-]{35}\b/ },
  { what: 'a URL with an embedded password', re: /\b[a-z][a-z0-9+.-]*:\/\/[^\s:@/]+:(?!\$\()[^\s@/]+@/i },
  { what: 'a JSON Web Token', re: /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/ },
];

/** The last word(s) of a variable name that say "this holds a secret". */
const SECRET_NAME_ENDINGS = [
  'PASSWORD',
  'PASSWD',
  'PASSPHRASE',
  'SECRET',
  'TOKEN',
  'APIKEY',
  'API_KEY',
  'ACCESS_KEY',
  'SECRET_KEY',
  'PRIVATE_KEY',
  'CLIENT_SECRET',
  'CREDENTIAL',
  'CREDENTIALS',
];

/** Values that cannot be a credential even under a secret-sounding name. */
function harmless(value: string): boolean {
  const v = value.trim();
  return (
    v === '' ||
    /^(true|false|yes|no|on|off|none|null)$/i.test(v) ||
    /^-?\d+(\.\d+)?$/.test(v) ||
    v.startsWith('/') ||
    /^\$\([A-Za-z_][A-Za-z0-9_]*\)$/.test(v)
  );
}

/** Shortest value that can count as machine-generated. */
export const MIN_GENERATED_LENGTH = 16;

/**
 * True for values that look machine-generated rather than chosen by a person: at least
 * MIN_GENERATED_LENGTH characters, no spaces, little word structure (under 60% of the letters
 * and digits in words of three or more letters, camelCase split, as in Secret names and keys
 * like `github-token` or `GithubTokenSecret`), at least two of lower case, upper case and
 * digits, and at least 3 bits of entropy per character.
 */
export function looksGenerated(value: string): boolean {
  const v = value.trim();
  if (v.length < MIN_GENERATED_LENGTH || /\s/.test(v)) return false;
  const alnum = v.replace(/[^A-Za-z0-9]/g, '').length;
  const inWords = (v.match(/[A-Z]?[a-z]+|[A-Z]+(?![a-z])/g) ?? []).filter((w) => w.length >= 3).join('').length;
  if (alnum === 0 || inWords / alnum >= 0.6) return false;
  const kinds = [/[a-z]/, /[A-Z]/, /[0-9]/].filter((re) => re.test(v)).length;
  return kinds >= 2 && entropyPerChar(v) >= 3;
}

function entropyPerChar(s: string): number {
  const counts = new Map<string, number>();
  for (const c of s) counts.set(c, (counts.get(c) ?? 0) + 1);
  let h = 0;
  for (const n of counts.values()) h -= (n / s.length) * Math.log2(n / s.length);
  return h;
}

/** What the check makes of one env value: refuse it (a credential) or warn (maybe one). */
export interface SecretFinding {
  refuse: boolean;
  /** Why; never contains the value itself, so it can be printed and logged. */
  reason: string;
}

/** Looks at the literal `value` of env variable `name`; undefined when it is plainly not a secret. */
export function literalSecretFinding(name: string, value: string): SecretFinding | undefined {
  for (const f of SECRET_FORMATS) {
    if (f.re.test(value)) return { refuse: true, reason: `its value looks like ${f.what}` };
  }
  const upper = name.toUpperCase();
  const ending = SECRET_NAME_ENDINGS.find((e) => upper === e || upper.endsWith(`_${e}`));
  if (!ending || harmless(value)) return undefined;
  if (looksGenerated(value))
    return { refuse: true, reason: `its name ends in ${ending} and its value looks like a generated key or token` };
  return { refuse: false, reason: `its name ends in ${ending} and it has a literal value` };
}
