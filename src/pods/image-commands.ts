/**
 * What a container without `command` runs, as Kubernetes decides it: the image's ENTRYPOINT
 * followed by the container's `args`, or by the image's CMD when it has no args. plugflow runs
 * user containers through its emissary, so it must know that argv before it builds the pod: the
 * controller looks the images up (src/controller/image-entrypoints.ts) and hands the answers here.
 */
import type { Container, Template } from '../api/index.js';
import type { ImageCommand } from '../images/registry-client.js';

/** The entrypoint and cmd of images, by image name exactly as the template writes it. */
export type ImageCommands = ReadonlyMap<string, ImageCommand>;

/**
 * The images whose entrypoint this template's pod needs: its container, the containerSet's
 * containers and the sidecars (all run under the emissary) that have no command. Init containers
 * run as written, so the kubelet applies their images' entrypoints itself.
 */
export function imagesToLookUp(template: Template): string[] {
  const out = new Set<string>();
  const add = (c: Container | undefined): void => {
    if (c?.image && !c.command?.length) out.add(c.image);
  };
  add(template.container);
  for (const c of template.containerSet?.containers ?? []) add(c);
  for (const c of template.sidecars ?? []) add(c);
  return [...out];
}

/** The container's argv as command and args; `what` names it in the error when its image is unknown. */
export function argvFor(c: Container, what: string, images: ImageCommands | undefined): { command: string[]; args: string[] } {
  if (c.command?.length) return { command: c.command, args: c.args ?? [] };
  const known = c.image ? images?.get(c.image) : undefined;
  if (!known)
    throw new Error(
      `${what}: has no command, and the entrypoint of image "${c.image ?? ''}" is not known (set command, or list the image in the controller's images ConfigMap)`,
    );
  const argv = [...known.entrypoint, ...(c.args?.length ? c.args : known.cmd)];
  if (!argv.length)
    throw new Error(`${what}: has no command, and image "${c.image ?? ''}" has neither an ENTRYPOINT nor a CMD, so nothing would run`);
  return { command: [argv[0]!], args: argv.slice(1) };
}
