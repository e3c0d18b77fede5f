/**
 * Spotting secrets written as literal env values in a plugin declaration. Secrets must come
 * through `env[].valueFrom.secretKeyRef` (spec document 000, sidecar rule 4): a declaration is
 * published as a ConfigMap that anyone with read access to the namespace can see.
 *
 * The rule must not raise false alarms, because a false alarm blocks a legitimate build. So it
 * refuses only two things:
 *  1. values in a format that is a credential whatever the variable is called (PEM private
 *     keys, well-known provider token prefixes, JWTs);
 *  2. a non-trivial value in a variable whose name *ends* in a secret word (`API_KEY`,
 *     `GITHUB_TOKEN`, `DB_PASSWORD`) — names that merely point at a secret (`TOKEN_PATH`,
 *     `SECRET_NAME`, `PASSWORD_FILE`) or count things (`MAX_TOKENS`) are fine, and so are values
 *     that cannot be a credential: empty, booleans, numbers, absolute paths, `$(VAR)` references.
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

/**
 * Returns why `value` of env variable `name` looks like a literal secret, or undefined. The
 * reason never contains the value itself, so it can be printed and logged.
 */
export function literalSecretReason(name: string, value: string): string | undefined {
  for (const f of SECRET_FORMATS) {
    if (f.re.test(value)) return `its value looks like ${f.what}`;
  }
  const upper = name.toUpperCase();
  const ending = SECRET_NAME_ENDINGS.find((e) => upper === e || upper.endsWith(`_${e}`));
  if (ending && !harmless(value)) return `its name ends in ${ending} and it has a literal value`;
  return undefined;
}
