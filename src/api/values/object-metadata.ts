/**
 * Kubernetes' rules for label and annotation keys and values (apimachinery validation), so that
 * a tool that writes metadata (`plugflow plugin build`) refuses what the API server would, naming
 * the key, instead of producing a manifest that fails at `kubectl apply`.
 *
 * - Key: `[prefix/]name`. The prefix is a DNS subdomain (lower case, at most 253 characters);
 *   the name is at most 63 characters of `[A-Za-z0-9-_.]`, starting and ending alphanumeric.
 *   Annotation keys are checked lower-cased, as the API server does (an upper-case prefix passes).
 * - Label value: empty, or at most 63 characters of the same alphabet, starting and ending alphanumeric.
 * - Annotations: any value, but keys and values together at most 256 KiB.
 */

const NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const MAX_NAME = 63;
const MAX_PREFIX = 253;
export const MAX_LABEL_VALUE = 63;

/** A namespace name (an RFC 1123 label, as Kubernetes requires). */
export const NAMESPACE_NAME = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
/** The API server's limit on the total size of an object's annotations (keys plus values). */
export const MAX_ANNOTATIONS_BYTES = 256 * 1024;

const ALPHABET = "alphanumeric characters, '-', '_' or '.', starting and ending with an alphanumeric character";

/** Why `key` is not a qualified name, or undefined. */
export function qualifiedNameProblem(key: string): string | undefined {
  const slash = key.indexOf('/');
  const prefix = slash >= 0 ? key.slice(0, slash) : undefined;
  const name = slash >= 0 ? key.slice(slash + 1) : key;
  if (prefix !== undefined) {
    if (prefix === '') return 'has an empty prefix before "/"';
    if (prefix.length > MAX_PREFIX) return `has a prefix longer than ${MAX_PREFIX} characters`;
    if (!DNS_SUBDOMAIN.test(prefix))
      return `has prefix "${prefix}", which is not a DNS subdomain (lower-case letters, digits, '-' and '.')`;
  }
  if (name === '') return 'has an empty name part';
  if (name.length > MAX_NAME) return `has a name part longer than ${MAX_NAME} characters`;
  if (!NAME.test(name)) return `has name part "${name}", which must be ${ALPHABET}`;
  return undefined;
}

/** One message per bad label, each naming `field["key"]`. */
export function labelProblems(labels: Record<string, string> | undefined, field: string): string[] {
  const out: string[] = [];
  for (const [key, value] of Object.entries(labels ?? {})) {
    const at = `${field}[${JSON.stringify(key)}]`;
    const keyProblem = qualifiedNameProblem(key);
    if (keyProblem) out.push(`${at}: the key ${keyProblem}; a label key is [prefix/]name (Kubernetes refuses it otherwise)`);
    if (value.length > MAX_LABEL_VALUE)
      out.push(`${at}: the value is longer than ${MAX_LABEL_VALUE} characters; put long text in an annotation`);
    else if (value !== '' && !NAME.test(value))
      out.push(`${at}: the value ${JSON.stringify(value)} must be empty or ${ALPHABET}; put free text in an annotation`);
  }
  return out;
}

/** One message per bad annotation key, and one if all together are too large. */
export function annotationProblems(annotations: Record<string, string> | undefined, field: string): string[] {
  const out: string[] = [];
  let bytes = 0;
  for (const [key, value] of Object.entries(annotations ?? {})) {
    const keyProblem = qualifiedNameProblem(key.toLowerCase());
    if (keyProblem)
      out.push(
        `${field}[${JSON.stringify(key)}]: the key ${keyProblem}; an annotation key is [prefix/]name (Kubernetes refuses it otherwise)`,
      );
    bytes += Buffer.byteLength(key) + Buffer.byteLength(value);
  }
  if (bytes > MAX_ANNOTATIONS_BYTES)
    out.push(`${field}: keys and values together take ${bytes} bytes, more than Kubernetes' limit of ${MAX_ANNOTATIONS_BYTES} (256 KiB)`);
  return out;
}
