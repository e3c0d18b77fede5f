/**
 * Plugin token isolation end to end (issue 5, security), with the agent pod run for real by the
 * local pod runner (private mount namespaces, runAsUser through setpriv):
 *
 * - each plugin's sidecar reads its own token at /var/run/workflow/token as its own non-root
 *   user (the token file is readable through the pod's fsGroup);
 * - it cannot read the other plugin's token: not at the agent's mount path, not next to its own,
 *   not through the local runner's directory (which the runner's containers can see), where it
 *   cannot read the agent's service account token either;
 * - the tokens appear in no log of the agent pod (init and main containers), nor in the
 *   controller's log, the Workflow or its TaskSet.
 *
 * Two probe plugins (Python) report what they saw in their node's message; the test compares it
 * with the token values it reads from the runner's volume directories while the pod runs.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GROUP, PLURAL, VERSION, type Workflow } from '../src/api/index.js';
import { renderTree } from '../src/cli/tree.js';
import { AGENT_UID, buildPlugin } from '../src/plugins/index.js';
import { agentPodName } from '../src/pods/agent-pod.js';
import { STAGE_DIR } from '../src/runner/namespaces.js';
import {
  agentSlot,
  applyInto,
  expectPhase,
  nodeNamed,
  pythonPlugin,
  startE2eStack,
  waitFor,
  waitForPluginLog,
  type E2eStack,
} from './support/e2e.js';

const PROBES = [
  { name: 'alpha', port: 4381, uid: 65534, other: 'beta' },
  { name: 'beta', port: 4382, uid: 4242, other: 'alpha' },
] as const;

/**
 * The probe: the first call answers Running with a requeue (so the agent pod lives long enough
 * for the test to read the tokens from the runner's volumes); the second reports what it saw.
 * It never puts a token into the reply, only a short hash of what it read.
 */
const PROBE = `
import errno, glob, hashlib
STATE = {"calls": 0}

def attempt(path):
    try:
        with open(path, "rb") as f:
            return "read sha256:" + hashlib.sha256(f.read().strip()).hexdigest()[:16]
    except OSError as e:
        return "error " + errno.errorcode.get(e.errno, str(e.errno))

def listing(path):
    try:
        return sorted(os.listdir(path))
    except OSError as e:
        return "error " + errno.errorcode.get(e.errno, str(e.errno))

def execute(config, args):
    STATE["calls"] += 1
    if STATE["calls"] == 1:
        return {"node": {"phase": "Running", "message": "probing"}, "requeue": "2s"}
    other = config["other"]
    st = os.stat(TOKEN_PATH)
    seen = {
        "uid": os.getuid(),
        "gid": os.getgid(),
        "groups": sorted(os.getgroups()),
        "own": attempt(TOKEN_PATH),
        "ownMode": "%o" % (st.st_mode & 0o7777),
        "ownGroup": st.st_gid,
        "ownDir": listing("/var/run/workflow"),
        "otherAtAgentPath": attempt("/var/run/plugflow/tokens/%s/token" % other),
        "otherBesideOwn": attempt("/var/run/workflow/%s/token" % other),
        "otherInOwnDir": attempt("/var/run/workflow/%s" % other),
        # The local runner's directory is visible to containers (at its stage path): try the
        # other plugin's token volume and the agent's service account token of every pod there.
        "viaRunnerDir": [attempt(os.path.join(pod, "volumes", v, "token"))
                         for pod in glob.glob(os.path.join(config["runnerDir"], "_run", "*", "*"))
                         for v in ("token-" + other, "kube-api-access")],
    }
    return {"node": {"phase": "Succeeded", "message": json.dumps(seen, sort_keys=True)}}
`;

const short = (token: string) => `read sha256:${createHash('sha256').update(token).digest('hex').slice(0, 16)}`;

let stack: E2eStack;

beforeAll(async () => {
  stack = await startE2eStack({ prefix: 'e2e-sec', server: false });
}, 240_000);

afterAll(async () => {
  await stack?.stop();
});

describe('plugin token isolation end to end', () => {
  it('each plugin reads only its own token, as its non-root user; no token reaches a log', async () => {
    for (const p of PROBES) {
      await applyInto(stack.admin, stack.namespace, [
        buildPlugin(pythonPlugin({ name: p.name, port: p.port, runAsUser: p.uid, execute: PROBE })).configMap,
      ]);
    }
    for (const p of PROBES) await waitForPluginLog(stack, 'added', stack.namespace, p.name);

    const workflow = {
      apiVersion: `${GROUP}/${VERSION}`,
      kind: 'Workflow',
      metadata: { generateName: 'tokens-' },
      spec: {
        entrypoint: 'main',
        templates: [
          { name: 'main', steps: [PROBES.map((p) => ({ name: p.name, template: p.name }))] },
          ...PROBES.map((p) => ({ name: p.name, plugin: { [p.name]: { other: p.other, runnerDir: STAGE_DIR } } })),
        ],
      },
    } as unknown as Workflow;

    const release = await agentSlot(PROBES.map((p) => p.port));
    let name = '';
    let pod: V1Pod;
    const tokens: Record<string, string> = {};
    let wf: Workflow;
    try {
      name = await stack.submit(workflow);
      // While the probes are between their two calls, read the tokens the init container wrote.
      pod = await waitFor(
        `the agent pod of ${name}`,
        () => stack.core.readNamespacedPod({ name: agentPodName(name), namespace: stack.namespace }),
        {
          everyMs: 100,
          describe: () => stack.describe(name),
        },
      );
      const volumes = join(stack.runner!.dir, '_run', stack.namespace, `${pod.metadata!.name}-${pod.metadata!.uid}`, 'volumes');
      for (const p of PROBES) {
        const file = join(volumes, `token-${p.name}`, 'token');
        tokens[p.name] = await waitFor(
          `the token of ${p.name} at ${file}`,
          () => (existsSync(file) ? readFileSync(file, 'utf8').trim() || undefined : undefined),
          {
            everyMs: 50,
            describe: () => stack.describe(name),
          },
        );
      }
      wf = await stack.waitForCompletion(name, 150_000);
    } finally {
      release();
    }
    expectPhase(wf, 'Succeeded');

    // The pod as the controller built it: each sidecar mounts only its own token volume.
    const sidecars = pod.spec!.containers.filter((c) => c.name !== 'main');
    expect(sidecars.map((c) => [c.name, c.volumeMounts?.map((m) => [m.name, m.mountPath, m.readOnly])])).toEqual(
      PROBES.map((p) => [p.name, [[`token-${p.name}`, '/var/run/workflow', true]]]),
    );
    expect(pod.spec!.securityContext?.fsGroup).toBe(AGENT_UID);

    expect(tokens.alpha).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(tokens.beta).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(tokens.alpha).not.toBe(tokens.beta);

    for (const p of PROBES) {
      const node = nodeNamed(wf, p.name);
      expect(node, renderTree(wf)).toMatchObject({ type: 'Plugin', phase: 'Succeeded' });
      const seen = JSON.parse(node.message!) as Record<string, unknown>;
      // Its own non-root user, with the pod's fsGroup as a supplementary group.
      expect(seen.uid).toBe(p.uid);
      expect(seen.uid).not.toBe(0);
      expect(seen.groups).toContain(AGENT_UID);
      // Its own token: readable, and exactly the one the init container wrote for it.
      expect(seen.own).toBe(short(tokens[p.name]!));
      expect(seen.ownMode).toBe('440');
      expect(seen.ownGroup).toBe(AGENT_UID);
      expect(seen.ownDir).toEqual(['token']);
      // The other plugin's token is nowhere in its view.
      expect(seen.otherAtAgentPath).toBe('error ENOENT');
      expect(seen.otherBesideOwn).toBe('error ENOENT');
      expect(seen.otherInOwnDir).toBe('error ENOENT');
      expect(seen.viaRunnerDir, 'the runner directory holds the agent pod').not.toHaveLength(0);
      for (const r of seen.viaRunnerDir as string[]) expect(r).toBe('error EACCES');
      expect(node.message).not.toContain(short(tokens[p.other]!));
    }

    // No token in any log of the agent pod, nor anywhere the controller or the API keeps.
    const podName = pod.metadata!.name!;
    const logs = Object.fromEntries(
      ['init', 'main', ...PROBES.map((p) => p.name)].map((c) => [c, stack.runner!.readLog(stack.namespace, podName, c)]),
    );
    expect(logs.init).toContain('plugin tokens written');
    expect(logs.main.length).toBeGreaterThan(0);
    for (const p of PROBES) expect(logs[p.name]).toContain('POST /api/v1/template.execute');
    const taskSet = await stack.objects.getNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace: stack.namespace,
      plural: PLURAL.workflowTaskSet,
      name,
    });
    const places: Record<string, string> = {
      ...Object.fromEntries(Object.entries(logs).map(([c, text]) => [`agent pod log of ${c}`, text])),
      'controller log': stack.controllerLog.map((l) => JSON.stringify(l)).join('\n'),
      workflow: JSON.stringify(await stack.getWorkflow(name)),
      'task set': JSON.stringify(taskSet),
      'agent pod spec': JSON.stringify(pod),
    };
    for (const [where, text] of Object.entries(places)) {
      for (const p of PROBES) expect(text.includes(tokens[p.name]!), `the token of ${p.name} appears in the ${where}`).toBe(false);
    }
  }, 240_000);
});
