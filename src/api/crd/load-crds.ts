/**
 * Reads the generated CRDs from crds/ (relative to this module, so it works from src/ under tsx
 * and from dist/ after a build). The test harness and `plugflow dev` install them with it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readYamlDocuments } from '../../yaml/kube-yaml.js';

/** The repository's crds/ directory. */
export const CRDS_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'crds');

/** Every CustomResourceDefinition in `dir` (default crds/), files in name order. */
export function loadCrds(dir: string = CRDS_DIR): object[] {
  const out: object[] = [];
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .sort()) {
    const path = join(dir, file);
    for (const value of readYamlDocuments(readFileSync(path, 'utf8'), path) as Array<{ kind?: string }>) {
      if (value.kind !== 'CustomResourceDefinition') {
        throw new Error(`${path}: expected a CustomResourceDefinition, found kind ${String(value.kind)}`);
      }
      out.push(value);
    }
  }
  return out;
}
