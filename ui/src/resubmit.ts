/**
 * The Resubmit form's request: the workflow's arguments prefilled, and the ones the user changed
 * sent as the peer's `parameters: ["name=value", …]` (src/operations/resubmit.ts). Unchanged ones
 * are not sent, so an argument taken from elsewhere (valueFrom) stays so. Pure: tested beside.
 */
import { valueText, type Parameter } from './types.js';

/** The form's first values: each argument's value ('' for one taken from elsewhere). */
export function initialValues(params: Parameter[]): Record<string, string> {
  return Object.fromEntries(params.map((p) => [p.name, valueText(p.value)]));
}

/** `["name=value", …]` for the arguments whose value changed, in the workflow's order. */
export function changedParameters(params: Parameter[], values: Record<string, string>): string[] {
  return params.filter((p) => values[p.name] !== undefined && values[p.name] !== (p.value ?? '')).map((p) => `${p.name}=${values[p.name]}`);
}

/** The `plugflow resubmit` command that does the same. */
export function resubmitCommand(name: string, namespace: string, changed: string[]): string {
  const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  return `plugflow resubmit ${name} -n ${namespace}${changed.map((p) => ` -p ${quote(p)}`).join('')}`;
}
