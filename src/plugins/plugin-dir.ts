/**
 * `plugflow plugin build DIR` on disk: read `DIR/plugin.yaml` and at most one `DIR/server.*`,
 * write `DIR/<name>-executor-plugin-configmap.yaml` and `DIR/README.md`. Also warns when the
 * plugin's port is taken by another plugin directory next to it (plugins of one agent pod share
 * the pod's network namespace, so two plugins on one port cannot both run).
 */
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { buildPlugin, type BuiltPlugin, type ServerFile } from './build-plugin.js';
import { PluginBuildError } from './errors.js';
import { readPluginYaml } from './read-plugin.js';

export interface BuildDirResult extends BuiltPlugin {
  pluginName: string;
  serverFile?: string;
  warnings: string[];
  /** Absolute or DIR-relative paths of the files written. */
  written: string[];
}

/** Finds `server.*` files: more than one is an error because only one can become the args. */
export function findServerFile(dir: string): ServerFile | undefined {
  const names = readdirSync(dir)
    .filter((f) => f.startsWith('server.') && f.length > 'server.'.length && statSync(join(dir, f)).isFile())
    .sort();
  if (names.length > 1) {
    throw new PluginBuildError(dir, [`found ${names.length} server files (${names.join(', ')}); keep exactly one server.<ext>`]);
  }
  if (names.length === 0) return undefined;
  return { fileName: names[0]!, text: readFileSync(join(dir, names[0]!), 'utf8') };
}

export function buildPluginDir(dir: string): BuildDirResult {
  const yamlPath = join(dir, 'plugin.yaml');
  if (!existsSync(yamlPath)) throw new PluginBuildError(dir, ['plugin.yaml not found']);
  const { plugin, warnings } = readPluginYaml(readFileSync(yamlPath, 'utf8'), yamlPath);
  const server = findServerFile(dir);
  const built = buildPlugin(plugin, server);
  warnings.push(...siblingPortClashes(dir, plugin.metadata.name!, plugin.spec.sidecar.container.ports?.map((p) => p.containerPort) ?? []));
  const configMapPath = join(dir, built.configMapFileName);
  const readmePath = join(dir, 'README.md');
  writeFileSync(configMapPath, built.configMapYaml);
  writeFileSync(readmePath, built.readme);
  return { ...built, pluginName: plugin.metadata.name!, serverFile: server?.fileName, warnings, written: [configMapPath, readmePath] };
}

/** Warnings for ports of this plugin also used by a plugin in a sibling directory. */
function siblingPortClashes(dir: string, name: string, ports: number[]): string[] {
  const parent = dirname(join(dir, '.'));
  const self = basename(join(dir, '.'));
  const out: string[] = [];
  let siblings: string[];
  try {
    siblings = readdirSync(parent).filter((d) => d !== self && existsSync(join(parent, d, 'plugin.yaml')));
  } catch {
    return out;
  }
  for (const sib of siblings.sort()) {
    let other;
    try {
      other = readPluginYaml(readFileSync(join(parent, sib, 'plugin.yaml'), 'utf8')).plugin;
    } catch {
      continue; // a broken neighbour is its own build's problem
    }
    if (other.metadata.name === name) continue;
    for (const p of other.spec.sidecar.container.ports ?? []) {
      if (ports.includes(p.containerPort)) {
        out.push(
          `port ${p.containerPort} is also used by plugin ${other.metadata.name} (${join(parent, sib)}); both cannot run in one agent pod`,
        );
      }
    }
  }
  return out;
}
