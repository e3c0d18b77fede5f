/**
 * What learning an image's entrypoint costs a step without `command` (issue 12), against the CNCF
 * distribution registry run here with images this bench pushes:
 *
 *   - a cold lookup: manifest, then config blob, from an open registry and from a token-auth one
 *     (the challenge, a token, then both requests), p50 over distinct images;
 *   - a warm lookup, as every later pod of that image gets it: the controller's cache, as a ratio
 *     to the cold one;
 *   - a fan-out: 1,000 steps of one new image asking at once — how many registry lookups follow.
 *
 *   npx tsx bench/image-entrypoint-bench.ts     (also part of `make bench`)
 */
import type { Template, Workflow } from '../src/api/index.js';
import { ImageEntrypoints } from '../src/controller/image-entrypoints.js';
import { parseImageReference, type ImageReference } from '../src/images/image-reference.js';
import { fetchImageCommand, type RegistryOptions } from '../src/images/registry-client.js';
import type { RegistryCredential } from '../src/images/pull-credentials.js';
import { FakeKubeClient } from '../src/kube/testing/fake-kube-client.js';
import { startImageRegistry } from '../test/support/image-registry.js';
import { pushImage } from '../test/support/oci-images.js';
import { percentile, type Figure } from './figures.js';
import { writeFiguresSection } from './run-all.js';

const USER = { user: 'bench', password: 'bench-pw' };

export async function runImageEntrypointBench(images = 20): Promise<Figure[]> {
  const [open, token] = await Promise.all([startImageRegistry(), startImageRegistry({ token: { ...USER, publicRepositories: [] } })]);
  try {
    const opts: RegistryOptions = { insecureHosts: new Set([open.host, token.host, token.tokenHost!]) };
    const credential: RegistryCredential = { username: USER.user, password: USER.password, source: 'bench' };
    for (let i = 0; i < images; i++) {
      await pushImage(open.host, `bench/tool-${i}`, '1', { entrypoint: ['/tool'], cmd: [String(i)] });
      await pushImage(token.host, `bench/tool-${i}`, '1', { entrypoint: ['/tool'], cmd: [String(i)] }, USER);
    }
    const cold = async (host: string, cred: RegistryCredential | undefined): Promise<number[]> => {
      const ms: number[] = [];
      for (let i = 0; i < images; i++) {
        const t0 = performance.now();
        await fetchImageCommand(parseImageReference(`${host}/bench/tool-${i}:1`), cred, opts);
        ms.push(performance.now() - t0);
      }
      return ms;
    };
    const openMs = percentile(await cold(open.host, undefined), 50);
    const tokenMs = percentile(await cold(token.host, credential), 50);

    // The controller's resolver, its registry counted; the ConfigMap read goes to an empty fake.
    let lookups = 0;
    const resolver = new ImageEntrypoints({
      client: new FakeKubeClient().asClient(),
      installNamespace: 'plugflow',
      insecureRegistries: [open.host],
      fetch: (ref: ImageReference, cred, o) => {
        lookups++;
        return fetchImageCommand(ref, cred, o);
      },
    });
    const wf: Workflow = { apiVersion: 'plugflow.io/v1alpha1', kind: 'Workflow', metadata: { name: 'b', namespace: 'ns' }, spec: {} };
    const step = (image: string): Template => ({ name: 's', container: { image } });
    await Promise.all(Array.from({ length: 1000 }, () => resolver.forTemplate(wf, step(`${open.host}/bench/tool-0:1`), 'default')));
    const fanOutLookups = lookups;
    const warm: number[] = [];
    for (let i = 0; i < 2000; i++) {
      const t0 = performance.now();
      await resolver.forTemplate(wf, step(`${open.host}/bench/tool-0:1`), 'default');
      warm.push(performance.now() - t0);
    }
    const warmMs = percentile(warm, 50);
    return [
      {
        name: 'cold entrypoint lookup, open registry (manifest + config), p50',
        value: Number(openMs.toFixed(2)),
        unit: 'ms',
        goal: 'well under a pod start (~800 ms here)',
        met: openMs < 80,
        note: `${images} distinct images over loopback`,
      },
      {
        name: 'cold entrypoint lookup, token-auth registry with a pull secret, p50',
        value: Number(tokenMs.toFixed(2)),
        unit: 'ms',
        goal: 'well under a pod start',
        met: tokenMs < 80,
        note: `${(tokenMs / openMs).toFixed(1)}× the open registry's (challenge + token first)`,
      },
      {
        name: 'warm lookup (the cache), per step, p50',
        value: Number((warmMs * 1000).toFixed(1)),
        unit: 'µs',
        goal: 'under 1% of a cold lookup',
        met: warmMs < openMs / 100,
        note: `${(warmMs / openMs).toFixed(4)}× the cold open lookup; includes the operator-ConfigMap check`,
      },
      {
        name: '1,000 steps of one new image asking at once: registry lookups',
        value: fanOutLookups,
        unit: 'lookups',
        goal: '1',
        met: fanOutLookups === 1,
      },
    ];
  } finally {
    await open.stop();
    await token.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const t0 = Date.now();
  writeFiguresSection(
    'image-entrypoints',
    'Image entrypoints (`npx tsx bench/image-entrypoint-bench.ts`; also part of `make bench`)',
    await runImageEntrypointBench(),
    t0,
  );
}
