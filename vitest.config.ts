import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// Three projects: `unit` runs pure tests beside the code (no cluster, fast); `kube` runs the
// Kubernetes-facing suites in test/ against one real control plane started by the global setup;
// `system` runs the CI soak and fuzz, each starting the whole system (own control plane, pod
// runner, controller and server processes) — one at a time and not beside `kube`, since agent
// pods on the local runner share the host's ports (`make test` runs it after the others, with
// --no-file-parallelism).
export default defineConfig({
  // `plugflow/sdk` (package.json "exports", what plugin authors import) from the sources, so the
  // example plugins' tests need no build; Node itself resolves it to dist/ (the image, tsx).
  resolve: { alias: { 'plugflow/sdk': fileURLToPath(new URL('./src/sdk/index.ts', import.meta.url)) } },
  test: {
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['src/**/*.test.ts', 'ui/src/**/*.test.ts', 'hack/**/*.test.ts'],
          environment: 'node',
        },
      },
      {
        extends: true,
        test: {
          name: 'kube',
          include: ['test/**/*.test.ts'],
          exclude: ['test/soak/soak.test.ts', 'test/fuzz/fuzz.test.ts', 'test/node/**'],
          environment: 'node',
          globalSetup: ['test/global-setup.ts'],
          testTimeout: 120_000,
          hookTimeout: 300_000,
        },
      },
      {
        // plugflow installed on a real node (hack/node/up.sh); its own cluster, no global setup.
        extends: true,
        test: {
          name: 'node',
          include: ['test/node/**/*.test.ts'],
          environment: 'node',
          testTimeout: 300_000,
          hookTimeout: 600_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'system',
          include: ['test/soak/soak.test.ts', 'test/fuzz/fuzz.test.ts'],
          environment: 'node',
          testTimeout: 15 * 60_000,
        },
      },
    ],
  },
});
