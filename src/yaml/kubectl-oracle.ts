/**
 * kubectl as the reference reader, for the YAML corpus (test/yaml-corpus): what JSON kubectl
 * makes of a file, without a cluster. `kubectl annotate --local -f FILE -o json` decodes the file
 * through the same path as `kubectl create -f` (split on `---`, sigs.k8s.io/yaml) and prints each
 * object; the probe annotation it adds is taken off again.
 */
import { spawnSync } from 'node:child_process';

const PROBE = 'probe.plugflow.io/corpus';

export type KubectlReading = { ok: true; docs: unknown[] } | { ok: false; error: string };

/** Why kubectl cannot be run here, or undefined when it can. */
export function kubectlMissing(): string | undefined {
  const r = spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' });
  if (r.error) return `kubectl cannot be run: ${r.error.message}`;
  if (r.status !== 0) return `kubectl version --client failed: ${r.stderr.trim()}`;
  return undefined;
}

/** Every object kubectl reads from `file`, or kubectl's error. Each doc must be an object with metadata. */
export function kubectlRead(file: string): KubectlReading {
  const r = spawnSync('kubectl', ['annotate', '--local', '-f', file, `${PROBE}=x`, '-o', 'json'], {
    encoding: 'utf8',
    env: { ...process.env, KUBECONFIG: '/dev/null' },
  });
  if (r.status !== 0) return { ok: false, error: r.stderr.trim() };
  // Several objects are printed one after another, each pretty-printed from a `{` in column 0.
  const docs = r.stdout
    .split(/\n(?=\{\n)/)
    .filter((chunk) => chunk.trim() !== '')
    .map((chunk) => {
      const obj = JSON.parse(chunk) as { metadata: { annotations: Record<string, string> } };
      delete obj.metadata.annotations[PROBE];
      if (Object.keys(obj.metadata.annotations).length === 0) delete (obj.metadata as { annotations?: unknown }).annotations;
      return obj;
    });
  return { ok: true, docs };
}
