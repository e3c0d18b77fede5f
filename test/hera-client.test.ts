/**
 * The peer's Python SDK (Hera, pinned in hack/hera-venv.sh, installed from PyPI into the cache),
 * unchanged, against plugflow's REST server with a controller and the local pod runner beside it:
 * test/hera/hera_client.py creates Steps and DAG workflows with parameters and waits for them,
 * lists them, reads a workflow's logs, creates a WorkflowTemplate and a CronWorkflow and submits a
 * workflow from each. Every check it makes prints `ok …`; here each is expected.
 */
import { execFile, execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../src/devenv/dev-stack.js';
import { cluster } from './support/cluster.js';
import { startE2eStack, type E2eStack } from './support/e2e.js';

describe('Hera, the peer Python SDK, unchanged', () => {
  let stack: E2eStack;
  let python: string;

  beforeAll(async () => {
    python = execFileSync('bash', [join(REPO_ROOT, 'hack', 'hera-venv.sh')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] })
      .trim()
      .split('\n')
      .pop()!;
    stack = await startE2eStack({ prefix: 'hera', plugins: false });
  }, 600_000);

  afterAll(async () => {
    await stack?.stop();
  });

  it('creates, waits for, lists and reads the logs of workflows; creates templates and cron workflows and submits from them', async () => {
    const run = await new Promise<{ code: number; out: string }>((resolve) => {
      execFile(
        python,
        [join(REPO_ROOT, 'test', 'hera', 'hera_client.py')],
        {
          timeout: 600_000,
          env: {
            PATH: process.env.PATH,
            PLUGFLOW_SERVER: stack.server!.url,
            PLUGFLOW_TOKEN: cluster().adminToken,
            PLUGFLOW_NAMESPACE: stack.namespace,
            PYTHONWARNINGS: 'ignore',
          },
        },
        (err, stdout, stderr) => resolve({ code: err ? 1 : 0, out: `${stdout}${stderr}` }),
      );
    });
    if (run.code !== 0) throw new Error(`hera_client.py failed:\n${run.out}`);
    const checks = run.out.split('\n').filter((l) => l.startsWith('ok '));
    expect(checks).toEqual([
      'ok a Steps workflow with a parameter created and waited for (Workflow.wait)',
      'ok a DAG workflow a >> b succeeded',
      "ok the DAG's nodes a and b are in its status",
      'ok list_workflows lists both',
      'ok workflow_logs answers (one line, with grep)',
      "ok the workflow's log route answers every pod's lines as JSON lines",
      'ok a WorkflowTemplate created',
      'ok a workflow submitted from the WorkflowTemplate succeeded',
      'ok a CronWorkflow created',
      'ok a workflow submitted from the CronWorkflow succeeded',
    ]);
    expect(run.out).toContain('all ok');
  }, 660_000);
});
