/**
 * The folders of src/ in layers, bottom first: the one declaration of the project's layout.
 * A folder may import its own files and the folders of lower layers only, never one of its own
 * layer or above — so there is no upward import and no cycle between folders.
 *
 * Read by .dependency-cruiser.cjs (which makes `make lint` fail on an import against it) and by
 * hack/gen-layout.ts (which writes the README's layout table from it and checks that every folder
 * of src/ is declared here and that every folder README lists every file of its folder).
 *
 * `barrel: true`: the folder has an index.ts, and code outside the folder imports it through
 * that file only (its tests may reach inside).
 */
module.exports = [
  {
    layer: 'foundations',
    folders: {
      yaml: 'the one reader of user YAML (what kubectl accepts), Go scalars, YAML 1.1 key warnings',
      log: 'the logger (winston, JSON lines) and errorMessage',
      tls: 'TLS material (operator PEM files or a generated self-signed certificate) for the server and the runner; a private CA for the TLS between plugflow’s own parts',
    },
  },
  {
    layer: 'records and languages',
    folders: {
      api: {
        barrel: true,
        text: 'record declarations (one per record: type, CRD schema and catalogue rule derived from it), value types (Duration, Quantity, …), constants, the schema check, the field catalogue',
      },
      expr: { barrel: true, text: 'the expression language (selectors, when, depends, retry, {{=…}})' },
    },
  },
  {
    layer: 'plugin model',
    folders: {
      plugins: {
        barrel: true,
        text: 'ExecutorPlugin build/read/validate, registry with namespace precedence, the agent pod’s names',
      },
    },
  },
  {
    layer: 'engine',
    folders: {
      engine: {
        barrel: true,
        text: 'pure workflow state machine: (workflow, observations, now) → (status, actions); validation, custom metrics, resource-template parsers',
      },
    },
  },
  {
    layer: 'decisions and clients',
    folders: {
      cron: 'CronWorkflow schedules and the pure decision of what a CronWorkflow needs now',
      artifacts: 'artifact plans (where each artifact goes) and the store clients (S3, Azure, GCS, git, http, driver plugins)',
      kube: 'the one Kubernetes client (per-request identity), apply, resilient informer, errors',
      archive:
        'the workflow archive on PostgreSQL: versioned migrations, the store (written once, pages by cursor with filters, exact counts, retention)',
      images: 'image references, registry client and pull credentials (an image’s entrypoint when a step gives no command)',
      sdk: { barrel: true, text: 'helpers for writing plugins in TypeScript' },
    },
  },
  {
    layer: 'pods',
    folders: {
      pods: 'what a step pod and the agent pod are: their specs, their policy, reading their status back (pure; the controller side)',
      resources: 'resource templates run: actions against the API, jq in a bounded worker',
    },
  },
  {
    layer: 'inside pods',
    folders: {
      'pod-side': 'what runs inside a step pod: `plugflow executor install|wait` (init and wait containers)',
      agent: 'plugin RPC client, task state machine (requeue, retry, 404 cache), http template',
    },
  },
  {
    layer: 'shells',
    folders: {
      runner: 'the local pod runner, which plays the kubelet on machines without one',
      controller: 'informers, work queue, reconciler applying engine actions, lock table, cron reconciler, leader election',
      operations: {
        barrel: true,
        text: 'what the server and the CLI do to workflows and templates (retry, resubmit, resume, lint, artifacts)',
      },
    },
  },
  { layer: 'server', folders: { server: 'REST, event endpoint, queue, binding dispatch, auth, the web UI’s files' } },
  { layer: 'development', folders: { devenv: 'the local control plane used by tests and `plugflow dev`' } },
  { layer: 'commands', folders: { cli: 'command-line entry points (`plugflow …`)' } },
];
