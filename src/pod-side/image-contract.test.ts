/**
 * The plugflow image is built two ways (hack/image for `make image`, the Dockerfile for Docker)
 * and read by code that never sees either: `plugflow executor install` looks for the emissary at
 * DEFAULT_EMISSARY_SOURCE, the controller names DEFAULT_IMAGE for step and agent pods, and the
 * manifests run that image as uid 65532. These checks keep the four in agreement.
 */
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { DEFAULT_IMAGE } from '../controller/controller.js';
import { DEFAULT_EMISSARY_SOURCE } from '../pods/layout.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

describe('the plugflow image contract', () => {
  const dockerfile = read('Dockerfile');
  const stage = read('hack/image/plugflow-files.sh');

  it('puts the emissary where `plugflow executor install` looks for it, in both builds', () => {
    expect(DEFAULT_EMISSARY_SOURCE).toBe('/usr/local/bin/plugflow-emissary');
    expect(dockerfile).toContain(`/out/plugflow-emissary ${DEFAULT_EMISSARY_SOURCE}\n`);
    expect(stage).toContain(`"$APP${DEFAULT_EMISSARY_SOURCE}"`);
  });

  it('runs as the user the manifests name, with plugflow as the entrypoint', () => {
    expect(dockerfile).toMatch(/^USER 65532:65532$/m);
    expect(dockerfile).toMatch(/^ENTRYPOINT \["plugflow"\]$/m);
    expect(read('hack/image/build.sh')).toContain('ENTRYPOINT=(plugflow) CMD=(--help) USER_ID=65532:65532 WORKDIR=/app');
    expect(read('hack/image/passwd')).toContain(':65532:65532:');
    for (const file of ['manifests/base/controller.yaml', 'manifests/base/server.yaml']) {
      expect(read(file), file).toMatch(/runAsUser: 65532/);
    }
  });

  it('is the image the manifests and the controller name, tagged with the package version', () => {
    const version = JSON.parse(read('package.json')).version as string;
    expect(DEFAULT_IMAGE).toBe(`plugflow/plugflow:${version}`);
    const images = [...read('manifests/install.yaml').matchAll(/image: (\S+)/g)].map((m) => m[1]);
    expect(images.length).toBeGreaterThan(0);
    expect(new Set(images)).toEqual(new Set([DEFAULT_IMAGE]));
  });

  it('builds both ways from the same Debian packages and dependency script', () => {
    expect(dockerfile).toContain('base-rootfs.sh "${DEBIAN_SUITE}" nodejs,ca-certificates');
    expect(read('hack/image/build.sh')).toContain('plugflow) PACKAGES=nodejs,ca-certificates;');
    expect(dockerfile).toContain('hack/image/node-modules.sh');
    expect(stage).toContain('"$HERE/node-modules.sh"');
  });
});
