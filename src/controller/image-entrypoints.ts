/**
 * Learns what a container without `command` runs (its image's ENTRYPOINT and CMD) before its pod
 * is built, because the emissary wraps the argv. In order:
 *
 * 1. the operator's ConfigMap `plugflow-images` (src/images/known-images.ts), read with a GET
 *    remembered for a few seconds;
 * 2. the answers already learnt: by image for 5 minutes when it names a tag, for good when it is
 *    pinned to a digest (the config under a digest cannot change);
 * 3. the image's registry (src/images/registry-client.ts), anonymously first. Only when the
 *    registry refuses are the pull secrets read — the workflow's `imagePullSecrets` and those of
 *    the step's service account — and they are read AS that service account (impersonation), so
 *    a workflow can use no Secret its account could not read itself. An answer found with
 *    credentials is remembered for that service account only.
 *
 * A multi-platform image is narrowed to the pod's `kubernetes.io/os`/`kubernetes.io/arch` node
 * selector, else to linux and the controller's architecture.
 *
 * A failure (unknown image, unreachable registry, refused credentials) fails the step with the
 * reason and what to do; it is remembered for 30 seconds, so a fan-out of a thousand steps of one
 * image asks the registry once. Concurrent lookups of one image share one request.
 *
 * The tenant chooses the image, hence the host:port the controller asks, so the step's message
 * says what failed in plugflow's own words and nothing the remote answered: a registry that
 * cannot be read (unreachable, refused port, timeout, 404, 500, a body that is not a manifest…)
 * gives one message, the same whatever the host did, so that a workflow cannot use the lookup to
 * scan ports or read internal services. What the message may still tell apart is about the user's
 * own configuration: credentials refused (401/403: which pull secret, no status number), pull
 * secrets missing or unreadable, a redirect or token service that is not HTTPS, no manifest for
 * the node selector's platform (see registry-client.ts). The remote's status, error text and a
 * short excerpt of its body go to the controller's log at warn level, naming the workflow.
 */
import type { V1ConfigMap, V1Secret, V1ServiceAccount } from '@kubernetes/client-node';
import type { Template, Workflow } from '../api/index.js';
import type { KubeClient } from '../kube/client.js';
import { isForbidden, isImpersonationRefused, isNotFound } from '../kube/errors.js';
import { CONFIGMAPS, SECRETS, SERVICE_ACCOUNTS } from '../kube/resource.js';
import { errorMessage } from '../log/error-message.js';
import { createLogger, type Logger } from '../log/logger.js';
import { parseImageReference, type ImageReference } from '../images/image-reference.js';
import { IMAGES_CONFIGMAP, IMAGES_KEY, KnownImagesError, parseKnownImages } from '../images/known-images.js';
import { credentialFor, credentialsFromSecret, PullSecretError, type RegistryCredential } from '../images/pull-credentials.js';
import {
  defaultPlatform,
  fetchImageCommand,
  RegistryError,
  type ImageCommand,
  type ImageLookup,
  type RegistryOptions,
} from '../images/registry-client.js';
import { imagesToLookUp, type ImageCommands } from '../pods/image-commands.js';

const CONFIGMAP_TTL_MS = 5_000;
const TAG_TTL_MS = 5 * 60_000;
const FAILURE_TTL_MS = 30_000;
const MAX_ENTRIES = 2_000;

/** An image's entrypoint could not be learnt; the step fails with this message. */
export class ImageLookupError extends Error {
  override readonly name = 'ImageLookupError';
}

export interface ImageEntrypointOptions {
  client: KubeClient;
  installNamespace: string;
  /** Registries (host:port) reached over plain HTTP. */
  insecureRegistries?: readonly string[];
  now?: () => number;
  /**
   * Where a failed registry lookup's details go (the remote's status, error, body excerpt), which
   * the step's message never carries; default a `controller` logger of its own.
   */
  log?: Logger;
  /** The registry lookup (tests count calls through it). */
  fetch?: (ref: ImageReference, credential: RegistryCredential | undefined, opts: RegistryOptions) => Promise<ImageLookup>;
}

type Entry = { at: number; pinned: boolean; result: ImageCommand } | { at: number; failure: string };
type Platform = { os: string; architecture: string };

/**
 * The platform an index is narrowed to: the pod's `kubernetes.io/os` and `kubernetes.io/arch`
 * node selector (template over workflow) when it names one, else linux and the controller's own
 * architecture — the pod's node is not known before it is scheduled.
 */
function platformOf(wf: Workflow, template: Template): Platform {
  const selector = { ...(wf.spec.nodeSelector ?? {}), ...(template.nodeSelector ?? {}) };
  const own = defaultPlatform();
  return { os: selector['kubernetes.io/os'] || own.os, architecture: selector['kubernetes.io/arch'] || own.architecture };
}

/** Cache keys: `anyone` for what an anonymous pull learnt, `scope` for what one account's credentials did. */
function keys(image: string, p: Platform, wf: Workflow, serviceAccountName: string): { anyone: string; scope: string } {
  const anyone = `|${image}|${p.os}/${p.architecture}`;
  return { anyone, scope: `${wf.metadata.namespace!}/${serviceAccountName}${anyone}` };
}

export class ImageEntrypoints {
  private readonly known = { at: -Infinity, images: new Map<string, ImageCommand>(), error: undefined as string | undefined };
  private readonly learnt = new Map<string, Entry>();
  private readonly inFlight = new Map<string, Promise<ImageCommand>>();
  private readonly registry: RegistryOptions;
  private readonly now: () => number;
  private readonly log: Logger;

  constructor(private readonly opts: ImageEntrypointOptions) {
    this.registry = { insecureHosts: new Set(opts.insecureRegistries ?? []) };
    this.now = opts.now ?? Date.now;
    this.log = opts.log ?? createLogger('controller');
  }

  /** The commands of the template's images that need one; undefined when none does. */
  async forTemplate(wf: Workflow, template: Template, serviceAccountName: string): Promise<ImageCommands | undefined> {
    const images = imagesToLookUp(template);
    if (!images.length) return undefined;
    const known = await this.knownImages();
    const platform = platformOf(wf, template);
    const out = new Map<string, ImageCommand>();
    for (const image of images) {
      const hit = known.get(image);
      out.set(image, hit ?? (await this.lookup(image, platform, wf, serviceAccountName)));
    }
    return out;
  }

  private async knownImages(): Promise<Map<string, ImageCommand>> {
    const k = this.known;
    if (this.now() - k.at >= CONFIGMAP_TTL_MS) {
      const where = `${this.opts.installNamespace}/${IMAGES_CONFIGMAP}`;
      try {
        const cm = await this.opts.client.get<V1ConfigMap>(CONFIGMAPS, this.opts.installNamespace, IMAGES_CONFIGMAP);
        k.images = parseKnownImages(cm.data?.[IMAGES_KEY], where);
        k.error = undefined;
      } catch (err) {
        if (isNotFound(err)) {
          k.images = new Map();
          k.error = undefined;
        } else if (err instanceof KnownImagesError) {
          k.images = new Map();
          k.error = err.message;
        } else throw err;
      }
      k.at = this.now();
    }
    if (k.error) throw new ImageLookupError(k.error);
    return k.images;
  }

  private async lookup(image: string, platform: Platform, wf: Workflow, serviceAccountName: string): Promise<ImageCommand> {
    const { anyone, scope } = keys(image, platform, wf, serviceAccountName);
    const hit = this.cached(anyone) ?? this.cached(scope);
    if (hit && 'result' in hit) return hit.result;
    if (hit && 'failure' in hit) throw new ImageLookupError(hit.failure);
    const flight = this.inFlight.get(scope);
    if (flight) return flight;
    const p = this.resolve(image, platform, wf, serviceAccountName).finally(() => this.inFlight.delete(scope));
    this.inFlight.set(scope, p);
    return p;
  }

  private cached(key: string): Entry | undefined {
    const e = this.learnt.get(key);
    if (!e) return undefined;
    const ttl = 'failure' in e ? FAILURE_TTL_MS : e.pinned ? Infinity : TAG_TTL_MS;
    if (this.now() - e.at < ttl) return e;
    this.learnt.delete(key);
    return undefined;
  }

  private remember(key: string, e: Entry): void {
    this.learnt.delete(key);
    this.learnt.set(key, e);
    if (this.learnt.size > MAX_ENTRIES) this.learnt.delete(this.learnt.keys().next().value as string);
  }

  private async resolve(image: string, platform: Platform, wf: Workflow, serviceAccountName: string): Promise<ImageCommand> {
    const { anyone, scope } = keys(image, platform, wf, serviceAccountName);
    const registry = { ...this.registry, platform };
    const fail = (key: string, message: string): never => {
      const full = `image "${image}": ${message}; set the container's command, or list the image in ConfigMap ${this.opts.installNamespace}/${IMAGES_CONFIGMAP}`;
      this.remember(key, { at: this.now(), failure: full });
      throw new ImageLookupError(full);
    };
    let ref: ImageReference;
    try {
      ref = parseImageReference(image);
    } catch (err) {
      return fail(anyone, errorMessage(err));
    }
    const fetch = this.opts.fetch ?? fetchImageCommand;
    const pinned = ref.digest !== undefined;
    /** One registry lookup; its answer or failure is remembered under `key`. Undefined: refused (401/403). */
    const ask = async (key: string, credential: RegistryCredential | undefined): Promise<ImageCommand | undefined> => {
      try {
        const found = await fetch(ref, credential, registry);
        const result = { entrypoint: found.entrypoint, cmd: found.cmd };
        this.remember(key, { at: this.now(), pinned, result });
        return result;
      } catch (err) {
        if (!(err instanceof RegistryError)) throw err;
        const context = {
          workflow: `${wf.metadata.namespace}/${wf.metadata.name}`,
          namespace: wf.metadata.namespace,
          image,
          registry: ref.host,
          serviceAccount: serviceAccountName,
          credentials: credential?.source ?? 'anonymous',
          detail: err.detail,
        };
        if (err.unauthorized && !credential) {
          this.log.debug('the registry refused an anonymous pull; trying the pull secrets', context);
          return undefined;
        }
        // The message is the registry client's own words (no remote content); the detail is logged.
        this.log.warn("an image's entrypoint could not be read from its registry; the step fails", { ...context, reason: err.message });
        return fail(key, err.message);
      }
    };
    const anonymous = await ask(anyone, undefined);
    if (anonymous) return anonymous;
    // The registry wants credentials: the namespace's pull secrets, read as the step's account.
    const { credential, tried } = await this.credential(ref, wf, serviceAccountName);
    if (!credential) return fail(scope, `${ref.host} refused an anonymous pull, and ${tried}`);
    return (await ask(scope, credential))!;
  }

  /** The credential for the image's registry from the pull secrets, and what was tried when none. */
  private async credential(
    ref: ImageReference,
    wf: Workflow,
    serviceAccountName: string,
  ): Promise<{ credential?: RegistryCredential; tried: string }> {
    const ns = wf.metadata.namespace!;
    const names = (wf.spec.imagePullSecrets ?? []).map((s) => s.name).filter((n): n is string => !!n);
    try {
      const sa = await this.opts.client.get<V1ServiceAccount>(SERVICE_ACCOUNTS, ns, serviceAccountName);
      for (const s of sa.imagePullSecrets ?? []) if (s.name && !names.includes(s.name)) names.push(s.name);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    if (!names.length)
      return { tried: `neither the workflow's imagePullSecrets nor service account ${ns}/${serviceAccountName} names a pull secret` };
    const asAccount = this.opts.client.as({ kind: 'serviceAccount', namespace: ns, name: serviceAccountName });
    const problems: string[] = [];
    const found: Map<string, RegistryCredential>[] = [];
    for (const name of names) {
      try {
        found.push(credentialsFromSecret(await asAccount.get<V1Secret>(SECRETS, ns, name)));
      } catch (err) {
        if (isImpersonationRefused(err)) problems.push((err as Error).message);
        else if (isForbidden(err))
          problems.push(`service account ${ns}/${serviceAccountName} may not read secret ${name} (grant it get on secrets/${name})`);
        else if (isNotFound(err)) problems.push(`secret ${name} does not exist`);
        else if (err instanceof PullSecretError) problems.push(err.message);
        else throw err;
      }
    }
    const credential = credentialFor(ref.registry, found);
    if (credential) return { credential, tried: '' };
    const readable = names.length - problems.length;
    return {
      tried:
        `no pull secret has credentials for ${ref.registry} (${names.map((n) => `secret ${n}`).join(', ')}` +
        `${readable < names.length ? `: ${problems.join('; ')}` : ''})`,
    };
  }
}
