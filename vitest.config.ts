import { defineConfig } from 'vitest/config';

// Two projects: `unit` runs pure tests beside the code (no cluster, fast); `kube` runs the
// Kubernetes-facing suites in test/ against one real control plane started by the global setup.
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['src/**/*.test.ts'],
          environment: 'node',
        },
      },
      {
        test: {
          name: 'kube',
          include: ['test/**/*.test.ts'],
          environment: 'node',
          globalSetup: ['test/global-setup.ts'],
          testTimeout: 120_000,
          hookTimeout: 300_000,
        },
      },
    ],
  },
});
