/**
 * Every example in examples/workflows/ end to end (issue 4): submitted through the REST server
 * (`plugflow submit`'s path) to the real API server, run by the controller with the local pod
 * runner playing the kubelet, and checked for its final phase, the shape of its node tree
 * (display names, types, counts) and its outputs. The suspend example is resumed with
 * `plugflow resume` (runResume); the hello-world output is read back with `plugflow logs`
 * (runLogs, through pods/log served by the runner).
 *
 * The workflows are submitted together at the start (they are independent, and the machine's
 * CPU is the bottleneck, not the order); each test then waits for its own.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readYamlDocuments } from '../src/yaml/kube-yaml.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GROUP, LABEL_WORKFLOW, PLURAL, VERSION, type NodeStatus, type Workflow } from '../src/api/index.js';
import { runLogs } from '../src/cli/workflow-ops.js';
import { runResume } from '../src/cli/workflow-operations.js';
import { renderTree } from '../src/cli/tree.js';
import { REPO_ROOT } from '../src/devenv/dev-stack.js';
import {
  childrenOf,
  expectPhase,
  nodeNamed,
  nodesNamed,
  outputParameter,
  rootNode,
  startE2eStack,
  typeCounts,
  waitFor,
  within,
  type E2eStack,
} from './support/e2e.js';

const EXAMPLES = join(REPO_ROOT, 'examples', 'workflows');

interface Doc {
  kind: string;
  metadata: { name?: string; generateName?: string; namespace?: string };
  [k: string]: unknown;
}

function readExample(file: string): Doc[] {
  return readYamlDocuments(readFileSync(join(EXAMPLES, file), 'utf8'), file) as Doc[];
}

let stack: E2eStack;
/** Example file → the name of its submitted workflow. */
const submitted = new Map<string, string>();

const done = (file: string, timeoutMs = 220_000): Promise<Workflow> => stack.waitForCompletion(submitted.get(file)!, timeoutMs);

const result = (n: NodeStatus): string | undefined => n.outputs?.result;

/** The first test to wait bears the start of all ten workflows on a shared 2-core machine. */
const SLOW = 240_000;

beforeAll(async () => {
  stack = await startE2eStack({ prefix: 'e2e-wf' });
  // template-ref.yaml: the WorkflowTemplate first (as `kubectl create -f` does), then the Workflow.
  for (const doc of readExample('template-ref.yaml').filter((d) => d.kind === 'WorkflowTemplate')) {
    await stack.objects.createNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace: stack.namespace,
      plural: PLURAL.workflowTemplate,
      body: { ...doc, metadata: { ...doc.metadata, namespace: stack.namespace } },
    });
  }
  const files = [
    'hello-world.yaml',
    'steps.yaml',
    'dag-diamond.yaml',
    'loops.yaml',
    'conditionals.yaml',
    'retries.yaml',
    'exit-handler.yaml',
    'parameters-outputs.yaml',
    'suspend-resume.yaml',
    'template-ref.yaml',
    'peer-variables.yaml',
    'memoize.yaml',
    'custom-metrics.yaml',
    'lifecycle-hooks.yaml',
    'daemon-step.yaml',
    'container-set.yaml',
  ];
  for (const file of files) {
    const workflows = readExample(file).filter((d) => d.kind === 'Workflow');
    expect(workflows, `${file} holds one Workflow`).toHaveLength(1);
    submitted.set(file, await stack.submit(workflows[0] as unknown as Workflow));
  }
}, 240_000);

afterAll(async () => {
  await stack?.stop();
});

describe('examples/workflows end to end', () => {
  it('covers every example in the directory', () => {
    expect(
      readdirSync(EXAMPLES)
        .filter((f) => f.endsWith('.yaml'))
        .sort(),
    ).toEqual([...submitted.keys()].sort());
  });

  it(
    'hello-world: one Pod node that prints "hello world", shown by `plugflow logs`',
    async () => {
      const wf = await done('hello-world.yaml');
      expectPhase(wf, 'Succeeded');
      const name = wf.metadata.name!;
      expect(name).toMatch(/^hello-world-/);
      expect(typeCounts(wf)).toEqual({ Pod: 1 });
      const root = rootNode(wf);
      expect(root).toMatchObject({ displayName: name, type: 'Pod', phase: 'Succeeded', templateName: 'hello' });
      expect(root.outputs?.exitCode).toBe('0');
      expect(result(root)).toBe('hello world');
      expect(wf.status?.progress).toBe('1/1');

      const lines: string[] = [];
      const logs = runLogs(name, { kubeconfig: stack.kubeconfigPath, namespace: stack.namespace }, (l) => lines.push(l));
      expect(await within(logs, 30_000, () => `plugflow logs ${name} to return (printed so far: ${JSON.stringify(lines)})`)).toBe(0);
      expect(lines, lines.join('\n')).toEqual([`${root.podName} | hello world`]);
    },
    SLOW,
  );

  it(
    'steps: a prepare group, then left and right in parallel',
    async () => {
      const wf = await done('steps.yaml');
      expectPhase(wf, 'Succeeded');
      expect(typeCounts(wf)).toEqual({ Steps: 1, StepGroup: 2, Pod: 3 });
      const root = rootNode(wf);
      expect(root).toMatchObject({ type: 'Steps', templateName: 'main', phase: 'Succeeded' });
      const groups = childrenOf(wf, root);
      expect(groups.map((g) => [g.displayName, g.type, g.phase])).toEqual([
        ['[0]', 'StepGroup', 'Succeeded'],
        ['[1]', 'StepGroup', 'Succeeded'],
      ]);
      expect(childrenOf(wf, groups[0]!).map((n) => [n.displayName, n.type, n.phase, result(n)])).toEqual([
        ['prepare', 'Pod', 'Succeeded', 'preparing'],
      ]);
      expect(childrenOf(wf, groups[1]!).map((n) => [n.displayName, n.type, n.phase, result(n)])).toEqual([
        ['left', 'Pod', 'Succeeded', 'left'],
        ['right', 'Pod', 'Succeeded', 'right'],
      ]);
      // The second group starts only after the first has finished.
      const prepare = nodeNamed(wf, 'prepare');
      for (const n of [nodeNamed(wf, 'left'), nodeNamed(wf, 'right')])
        expect(Date.parse(n.startedAt!)).toBeGreaterThanOrEqual(Date.parse(prepare.finishedAt!));
    },
    SLOW,
  );

  it(
    'dag-diamond: A, then B and C, then D',
    async () => {
      const wf = await done('dag-diamond.yaml');
      expectPhase(wf, 'Succeeded');
      expect(typeCounts(wf)).toEqual({ DAG: 1, Pod: 4 });
      const root = rootNode(wf);
      expect(root).toMatchObject({ type: 'DAG', templateName: 'diamond', phase: 'Succeeded' });
      const [a, b, c, d] = ['A', 'B', 'C', 'D'].map((n) => nodeNamed(wf, n));
      for (const [n, text] of [
        [a, 'A'],
        [b, 'B'],
        [c, 'C'],
        [d, 'D'],
      ] as const) {
        expect(n).toMatchObject({ type: 'Pod', phase: 'Succeeded', boundaryID: root.id });
        expect(result(n)).toBe(text);
      }
      // The links follow the graph: the DAG's children are the tasks without dependencies.
      expect(childrenOf(wf, root).map((n) => n.displayName)).toEqual(['A']);
      expect(
        childrenOf(wf, a!)
          .map((n) => n.displayName)
          .sort(),
      ).toEqual(['B', 'C']);
      expect(childrenOf(wf, b!).map((n) => n.displayName)).toEqual(['D']);
      expect(childrenOf(wf, c!).map((n) => n.displayName)).toEqual(['D']);
      for (const n of [b!, c!]) expect(Date.parse(n.startedAt!)).toBeGreaterThanOrEqual(Date.parse(a!.finishedAt!));
      // Progress counts each task once: its dependents are linked as children but are not part of it.
      expect([root, a, b, c, d].map((n) => n!.progress)).toEqual(['4/4', '1/1', '1/1', '1/1', '1/1']);
      expect(wf.status?.progress).toBe('4/4');
      expect(Date.parse(d!.startedAt!)).toBeGreaterThanOrEqual(Math.max(Date.parse(b!.finishedAt!), Date.parse(c!.finishedAt!)));
    },
    SLOW,
  );

  it(
    'loops: withItems expands to 2 nodes, withParam over a generated list to 3',
    async () => {
      const wf = await done('loops.yaml');
      expectPhase(wf, 'Succeeded');
      expect(typeCounts(wf)).toEqual({ Steps: 1, StepGroup: 3, Pod: 6 });
      const groups = childrenOf(wf, rootNode(wf));
      expect(groups.map((g) => g.displayName)).toEqual(['[0]', '[1]', '[2]']);
      expect(childrenOf(wf, groups[0]!).map((n) => [n.displayName, n.type, n.phase, result(n)])).toEqual([
        ['items(0:os:debian,version:12)', 'Pod', 'Succeeded', 'debian-12'],
        ['items(1:os:alpine,version:3.20)', 'Pod', 'Succeeded', 'alpine-3.20'],
      ]);
      const generate = childrenOf(wf, groups[1]!);
      expect(generate.map((n) => [n.displayName, n.type, n.phase])).toEqual([['generate', 'Pod', 'Succeeded']]);
      expect(JSON.parse(result(generate[0]!)!)).toEqual(['a', 'b', 'c']);
      expect(childrenOf(wf, groups[2]!).map((n) => [n.displayName, n.type, n.phase, result(n)])).toEqual([
        ['params(0:a)', 'Pod', 'Succeeded', 'a'],
        ['params(1:b)', 'Pod', 'Succeeded', 'b'],
        ['params(2:c)', 'Pod', 'Succeeded', 'c'],
      ]);
    },
    SLOW,
  );

  it(
    'conditionals: the coin says heads, so "heads" runs and "tails" is Skipped',
    async () => {
      const wf = await done('conditionals.yaml');
      expectPhase(wf, 'Succeeded');
      expect(result(nodeNamed(wf, 'flip'))).toBe('heads');
      const heads = nodeNamed(wf, 'heads');
      expect(heads).toMatchObject({ type: 'Pod', phase: 'Succeeded' });
      expect(result(heads)).toBe('it was heads');
      const tails = nodeNamed(wf, 'tails');
      expect(tails).toMatchObject({ type: 'Skipped', phase: 'Skipped' });
      expect(tails.podName).toBeUndefined();
      expect(tails.message).toBe('when "heads == tails" evaluated false');
      expect(typeCounts(wf)).toEqual({ Steps: 1, StepGroup: 2, Pod: 2, Skipped: 1 });
      // Exactly the pods of flip and heads ran.
      const pods = await stack.core.listNamespacedPod({
        namespace: stack.namespace,
        labelSelector: `${LABEL_WORKFLOW}=${wf.metadata.name}`,
      });
      expect(pods.items.map((p) => p.metadata!.name).sort()).toEqual([nodeNamed(wf, 'flip').podName, heads.podName].sort());
    },
    SLOW,
  );

  it(
    'retries: attempts 0 and 1 fail, attempt 2 succeeds',
    async () => {
      const wf = await done('retries.yaml');
      expectPhase(wf, 'Succeeded');
      const root = rootNode(wf);
      expect(root).toMatchObject({ type: 'Retry', phase: 'Succeeded', templateName: 'flaky' });
      const attempts = childrenOf(wf, root);
      expect(attempts.map((n) => [n.displayName, n.type, n.phase])).toEqual([
        [`${root.displayName}(0)`, 'Pod', 'Failed'],
        [`${root.displayName}(1)`, 'Pod', 'Failed'],
        [`${root.displayName}(2)`, 'Pod', 'Succeeded'],
      ]);
      expect(attempts.map((n) => result(n))).toEqual(['attempt 0', 'attempt 1', 'attempt 2']);
      expect(attempts.map((n) => n.outputs?.exitCode)).toEqual(['1', '1', '0']);
      expect(attempts[0]!.message).toContain('exit code 1');
      expect(typeCounts(wf)).toEqual({ Retry: 1, Pod: 3 });
      // Backoff 1s then 2s after the previous attempt ended.
      expect(Date.parse(attempts[1]!.startedAt!) - Date.parse(attempts[0]!.finishedAt!)).toBeGreaterThanOrEqual(1000);
      expect(Date.parse(attempts[2]!.startedAt!) - Date.parse(attempts[1]!.finishedAt!)).toBeGreaterThanOrEqual(2000);
    },
    SLOW,
  );

  it(
    'daemon-step: the server counts as done once ready, its IP reaches the client, and it is stopped (pod deleted) when the steps end',
    async () => {
      const wf = await done('daemon-step.yaml');
      expectPhase(wf, 'Succeeded');
      const server = nodeNamed(wf, 'server');
      expect(server).toMatchObject({
        type: 'Pod',
        phase: 'Succeeded',
        daemoned: true,
        message: `daemon stopped: ${wf.metadata.name} ended`,
      });
      expect(server.podIP).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
      expect(result(nodeNamed(wf, 'client'))).toBe(`the server is at ${server.podIP}`);
      await waitFor(
        'the daemon pod deleted',
        async () => {
          const pods = await stack.core.listNamespacedPod({
            namespace: stack.namespace,
            labelSelector: `${LABEL_WORKFLOW}=${wf.metadata.name}`,
          });
          return pods.items.every((p) => p.metadata?.name !== server.podName || p.metadata?.deletionTimestamp) ? true : undefined;
        },
        { timeoutMs: 60_000 },
      );
    },
    SLOW,
  );

  it(
    'container-set: the containers ran in dependency order in one pod, main reported the shared file, and a failed command ran again in place',
    async () => {
      const wf = await done('container-set.yaml');
      expectPhase(wf, 'Succeeded');
      const together = nodeNamed(wf, 'together');
      expect(together.type).toBe('Pod');
      expect(together.outputs?.parameters).toEqual([{ name: 'message', value: 'a: hello\nb: hello\nmain: hello' }]);
      expect(result(together)).toBe('a: hello\nb: hello\nmain: hello');
      expect(nodeNamed(wf, 'flaky').phase).toBe('Succeeded');
      expect(result(nodeNamed(wf, 'show'))).toBe('3');
      // Each container is a child node that followed its container, in the set's order.
      const kids = (together.children ?? []).map((id) => wf.status!.nodes![id]!);
      expect(kids.map((k) => [k.displayName, k.type, k.phase])).toEqual([
        ['a', 'Container', 'Succeeded'],
        ['b', 'Container', 'Succeeded'],
        ['main', 'Container', 'Succeeded'],
      ]);
      expect(Date.parse(kids[1]!.startedAt!)).toBeGreaterThanOrEqual(Date.parse(kids[0]!.startedAt!));
      const pod = await stack.core.readNamespacedPod({ namespace: stack.namespace, name: together.podName! });
      expect(pod.spec!.containers.map((c) => c.name)).toEqual(['a', 'b', 'main', 'wait']);
    },
    SLOW,
  );

  it(
    'lifecycle-hooks: the workflow and step hooks whose expression held ran once each; the exit hook and the next step ran after them',
    async () => {
      const wf = await done('lifecycle-hooks.yaml');
      expectPhase(wf, 'Succeeded');
      const name = wf.metadata.name!;
      const ran = (display: string): NodeStatus => {
        const found = nodesNamed(wf, display);
        expect(found, display).toHaveLength(1);
        expect(found[0]!.phase, display).toBe('Succeeded');
        return found[0]!;
      };
      expect(result(ran(`${name}.hooks.running`))).toBe(`${name} started`);
      const running = ran('build.hooks.running');
      const succeeded = ran('build.hooks.succeeded');
      expect([result(running), result(succeeded)]).toEqual(['build is running', 'build succeeded']);
      expect(nodesNamed(wf, 'build.hooks.failed')).toEqual([]);
      const exit = ran('build.onExit');
      expect(result(exit)).toBe('build ended: Succeeded');
      const build = nodeNamed(wf, 'build');
      expect(build.children).toEqual(expect.arrayContaining([running.id, succeeded.id, exit.id]));
      // The exit hook started after the hooks that started had finished, the next step after all three.
      const end = Math.max(Date.parse(running.finishedAt!), Date.parse(succeeded.finishedAt!));
      expect(Date.parse(exit.startedAt!)).toBeGreaterThanOrEqual(end);
      expect(Date.parse(ran('ship').startedAt!)).toBeGreaterThanOrEqual(Date.parse(exit.finishedAt!));
    },
    SLOW,
  );

  it(
    'exit-handler: main fails on purpose, the handler runs and sees Failed, the workflow is Failed',
    async () => {
      const wf = await done('exit-handler.yaml');
      expectPhase(wf, 'Failed');
      const name = wf.metadata.name!;
      const root = rootNode(wf);
      expect(root).toMatchObject({ type: 'Pod', phase: 'Failed', templateName: 'main' });
      expect(root.outputs?.exitCode).toBe('3');
      expect(root.message).toContain('exit code 3');
      expect(result(root)).toBe('failing on purpose');
      const handler = nodesNamed(wf, 'onExit');
      expect(handler).toHaveLength(1);
      expect(handler[0]).toMatchObject({ name: `${name}.onExit`, type: 'Pod', phase: 'Succeeded', templateName: 'report' });
      expect(result(handler[0]!)).toBe(`workflow ${name} finished: Failed`);
      expect(Date.parse(handler[0]!.startedAt!)).toBeGreaterThanOrEqual(Date.parse(root.finishedAt!));
      expect(typeCounts(wf)).toEqual({ Pod: 2 });
    },
    SLOW,
  );

  it(
    'parameters-outputs: output file, result, globalName and valueFrom.expression',
    async () => {
      const wf = await done('parameters-outputs.yaml');
      expectPhase(wf, 'Succeeded');
      expect(typeCounts(wf)).toEqual({ Steps: 1, StepGroup: 2, Pod: 2 });
      const produce = nodeNamed(wf, 'produce');
      expect(produce.inputs?.parameters?.find((p) => p.name === 'word')?.value).toBe('hello');
      expect(outputParameter(produce, 'out')).toBe('hello world');
      expect(result(produce)).toBe('stdout of produce');
      const consume = nodeNamed(wf, 'consume');
      expect(Object.fromEntries((consume.inputs?.parameters ?? []).map((p) => [p.name, p.value]))).toEqual({
        'from-file': 'hello world',
        'from-stdout': 'stdout of produce',
      });
      expect(outputParameter(consume, 'combined')).toBe('hello world / stdout of produce');
      expect(result(consume)).toBe('hello world | stdout of produce');
      expect(wf.status?.outputs?.parameters).toEqual([expect.objectContaining({ name: 'produced', value: 'hello world' })]);
    },
    SLOW,
  );

  it(
    'peer-variables: tagged input default, tasks.name, output path, skipped-output default, tagged retry expression',
    async () => {
      const wf = await done('peer-variables.yaml');
      expectPhase(wf, 'Succeeded');
      const write = nodeNamed(wf, 'write');
      expect(write.inputs?.parameters).toEqual([{ name: 'greeting', value: 'hi' }]);
      expect(outputParameter(write, 'msg')).toBe('hi from write');
      expect(nodeNamed(wf, 'maybe').phase).toBe('Skipped');
      const report = nodeNamed(wf, 'report');
      expect(report).toMatchObject({ type: 'Retry', phase: 'Succeeded' });
      const attempts = childrenOf(wf, report);
      expect(attempts.map((n) => n.phase)).toEqual(['Failed', 'Succeeded']);
      expect(attempts.map((n) => result(n))).toEqual(['hi from write / (skipped) / config', 'hi from write / (skipped) / config']);
    },
    SLOW,
  );

  it(
    'suspend-resume: the timed pause ends by itself, `plugflow resume` releases approve',
    async () => {
      const name = submitted.get('suspend-resume.yaml')!;
      const waiting = await waitFor(
        `${name}: pause Succeeded and approve waiting`,
        async () => {
          const wf = await stack.getWorkflow(name);
          const approve = nodesNamed(wf, 'approve')[0];
          return approve?.phase === 'Running' ? wf : undefined;
        },
        { timeoutMs: 120_000, describe: () => stack.describe(name) },
      );
      expect(waiting.status?.phase).toBe('Running');
      const pause = nodeNamed(waiting, 'pause');
      expect(pause).toMatchObject({ type: 'Suspend', phase: 'Succeeded' });
      expect(Date.parse(pause.finishedAt!) - Date.parse(pause.startedAt!)).toBeGreaterThanOrEqual(2000);
      expect(nodeNamed(waiting, 'approve').type).toBe('Suspend');
      // Nothing after approve starts while it waits.
      await new Promise((r) => setTimeout(r, 3000));
      const still = await stack.getWorkflow(name);
      expect(nodeNamed(still, 'approve').phase, renderTree(still)).toBe('Running');
      expect(nodesNamed(still, 'after')).toHaveLength(0);

      const out: string[] = [];
      expect(
        await within(
          runResume(name, { kubeconfig: stack.kubeconfigPath, namespace: stack.namespace }, (l) => out.push(l)),
          30_000,
          `plugflow resume ${name}`,
        ),
      ).toBe(0);
      expect(out.join('\n')).toContain(`Workflow ${stack.namespace}/${name} resumed`);

      const wf = await done('suspend-resume.yaml');
      expectPhase(wf, 'Succeeded');
      expect(nodeNamed(wf, 'approve')).toMatchObject({ type: 'Suspend', phase: 'Succeeded' });
      const after = nodeNamed(wf, 'after');
      expect(after).toMatchObject({ type: 'Pod', phase: 'Succeeded' });
      expect(result(after)).toBe('approved');
      expect(typeCounts(wf)).toEqual({ Steps: 1, StepGroup: 3, Suspend: 2, Pod: 1 });
      // Resuming again: nothing waits any more.
      expect(await runResume(name, { kubeconfig: stack.kubeconfigPath, namespace: stack.namespace }, () => {})).toBe(1);
    },
    SLOW,
  );

  it(
    'memoize: "first" runs a pod and fills the cache, "again" is answered from it without a pod',
    async () => {
      const wf = await done('memoize.yaml');
      expectPhase(wf, 'Succeeded');
      expect(typeCounts(wf)).toEqual({ Steps: 1, StepGroup: 3, Pod: 3 });
      const first = nodeNamed(wf, 'first');
      const again = nodeNamed(wf, 'again');
      expect(first).toMatchObject({ phase: 'Succeeded', memoizationStatus: { hit: false, key: 'square-12', cacheName: 'squares' } });
      expect(first.podName).toBeDefined();
      expect(again).toMatchObject({ phase: 'Succeeded', memoizationStatus: { hit: true, key: 'square-12', cacheName: 'squares' } });
      expect(again.podName).toBeUndefined();
      expect(again.outputs?.parameters).toEqual([{ name: 'sq', value: '144' }]);
      expect(result(nodeNamed(wf, 'show'))).toBe('12 squared is 144');
    },
    SLOW,
  );

  it(
    "custom-metrics: each build counted once by status and target, the workflow's time by status, on the controller's metrics",
    async () => {
      const wf = await done('custom-metrics.yaml');
      expectPhase(wf, 'Succeeded');
      const text = await stack.controller.metrics.registry.metrics();
      // Every series carries the workflow's namespace (workflow_namespace), which workflows cannot set.
      const ns = wf.metadata.namespace!;
      expect(text).toContain(`builds_total{status="Succeeded",target="linux",workflow_namespace="${ns}"} 1`);
      expect(text).toContain(`builds_total{status="Succeeded",target="darwin",workflow_namespace="${ns}"} 1`);
      expect(text).toContain(`build_seconds_count{workflow_namespace="${ns}"} 2`);
      expect(text).toMatch(new RegExp(`workflow_seconds\\{status="Succeeded",workflow_namespace="${ns}"\\} \\d`));
    },
    SLOW,
  );

  it(
    "template-ref: the step runs the WorkflowTemplate's template with the given argument",
    async () => {
      const wf = await done('template-ref.yaml');
      expectPhase(wf, 'Succeeded');
      expect(typeCounts(wf)).toEqual({ Steps: 1, StepGroup: 1, Pod: 1 });
      const greet = nodeNamed(wf, 'greet');
      expect(greet).toMatchObject({ type: 'Pod', phase: 'Succeeded', templateRef: { name: 'greeter', template: 'greet' } });
      expect(greet.inputs?.parameters?.find((p) => p.name === 'who')?.value).toBe('plugflow');
      expect(result(greet)).toBe('hello plugflow');
    },
    SLOW,
  );
});
