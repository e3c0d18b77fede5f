/** Small pieces every page uses: errors, the CLI hint, phase badges. */
import { useState } from 'preact/hooks';
import type { Phase } from './types.js';

export function ErrorBox({ error }: { error?: string }) {
  if (!error) return null;
  return (
    <p class="error" role="alert">
      {error}
    </p>
  );
}

/**
 * Why some actions are disabled: a disabled button's title is seen only by a mouse, so the
 * reasons are also in the page, for keyboards and screen readers.
 */
export function Unavailable({ reasons }: { reasons: [label: string, why: string][] }) {
  if (reasons.length === 0) return null;
  return (
    <details class="why">
      <summary>Why are some actions unavailable?</summary>
      <ul>
        {reasons.map(([label, why]) => (
          <li>
            {label}: {why}
          </li>
        ))}
      </ul>
    </details>
  );
}

/** Why the one action of a form is disabled, in the page (see Unavailable). */
export function Refusal({ label, why }: { label: string; why?: string }) {
  if (!why) return null;
  return (
    <p class="refusal" role="note">
      {label}: {why}
    </p>
  );
}

/** The equivalent CLI command, to copy: the UI teaches the CLI rather than replacing it. */
export function Cli({ command, label = 'CLI' }: { command: string; label?: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <div class="cli">
      <span class="cli-label">{label}</span>
      <code>{command}</code>
      <button
        type="button"
        class="small"
        aria-label="Copy the command"
        onClick={() =>
          void navigator.clipboard?.writeText(command).then(
            () => setCopied(true),
            () => setCopied(false),
          )
        }
      >
        {copied ? 'Copied' : 'Copy'}
      </button>
    </div>
  );
}

export function PhaseBadge({ phase }: { phase?: Phase }) {
  const p = phase || 'Unknown';
  return <span class={`phase phase-${p}`}>{p}</span>;
}

/** `-n ns` for a CLI command, left out for all namespaces. */
export function nsFlag(namespace: string): string {
  return namespace ? ` -n ${namespace}` : '';
}
