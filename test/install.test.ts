/**
 * manifests/install.yaml against a real API server with RBAC: it applies cleanly, and for each
 * component's service account the API server's own access review says it may do exactly what
 * that component needs — no more.
 */
import {
  AppsV1Api,
  AuthorizationV1Api,
  CoreV1Api,
  RbacAuthorizationV1Api,
  type KubernetesObject,
  type V1Deployment,
  type V1StatefulSet,
  type V1ResourceRule,
} from '@kubernetes/client-node';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml, parseAllDocuments } from 'yaml';
import { busSecrets } from '../src/cli/event-bus-secrets.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Command } from 'commander';
import { registerServerCommands } from '../src/cli/server.js';
import { impersonationBinding } from '../src/devenv/dev-stack.js';
import { KubeClient } from '../src/kube/client.js';
import { applyAndWait, readManifests } from '../src/kube/apply.js';
import { eventually } from './controller-harness.js';
import { REPO_ROOT } from './support/apply.js';
import { adminKubeConfig, createTestNamespace, deleteTestNamespace, kubeConfigForToken, serviceAccountToken } from './support/cluster.js';

/** The long flags of `plugflow server`, from its command definition. */
function registeredServerFlags(): string[] {
  const program = new Command();
  registerServerCommands(program);
  return program.commands.find((c) => c.name() === 'server')!.options.map((o) => o.long!);
}

/** Rules every authenticated user has (system:basic-user, system:discovery): not ours to judge. */
const BASELINE = new Set(['selfsubjectaccessreviews', 'selfsubjectrulesreviews', 'selfsubjectreviews']);

/** The API server's view of what a token may do in a namespace, as `group/resource: verbs`. */
async function rulesOf(token: string, namespace: string): Promise<Record<string, string[]>> {
  const authz = kubeConfigForToken(token).makeApiClient(AuthorizationV1Api);
  const review = await authz.createSelfSubjectRulesReview({ body: { spec: { namespace } } });
  const out: Record<string, Set<string>> = {};
  for (const rule of review.status?.resourceRules ?? ([] as V1ResourceRule[])) {
    for (const group of rule.apiGroups ?? ['']) {
      for (const resource of rule.resources ?? []) {
        if (BASELINE.has(resource)) continue;
        const key = `${group}/${resource}${rule.resourceNames?.length ? `#${rule.resourceNames.join(',')}` : ''}`;
        out[key] ??= new Set();
        for (const verb of rule.verbs) out[key].add(verb);
      }
    }
  }
  return Object.fromEntries(
    Object.entries(out)
      .sort()
      .map(([k, v]) => [k, [...v].sort()]),
  );
}

async function can(user: string, verb: string, resource: string, namespace: string, group = '', subresource?: string): Promise<boolean> {
  const authz = adminKubeConfig().makeApiClient(AuthorizationV1Api);
  const ns = user.split(':')[2];
  const review = await authz.createSubjectAccessReview({
    body: {
      spec: {
        user,
        groups: ['system:serviceaccounts', `system:serviceaccounts:${ns}`, 'system:authenticated'],
        resourceAttributes: { verb, resource, namespace, group, subresource },
      },
    },
  });
  return review.status?.allowed === true;
}

describe('manifests/install.yaml', () => {
  let workNs: string;

  beforeAll(async () => {
    await applyAndWait(adminKubeConfig(), readManifests(join(REPO_ROOT, 'manifests', 'install.yaml')));
    workNs = await createTestNamespace('install');
  });
  afterAll(async () => {
    await deleteTestNamespace(workNs);
  });

  it('applies cleanly: namespace, accounts, deployments with probes and non-root pods, service', async () => {
    const kc = adminKubeConfig();
    const apps = kc.makeApiClient(AppsV1Api);
    const core = kc.makeApiClient(CoreV1Api);
    for (const name of ['plugflow-controller', 'plugflow-server']) {
      const dep = await apps.readNamespacedDeployment({ name, namespace: 'plugflow' });
      const pod = dep.spec!.template.spec!;
      expect(pod.serviceAccountName).toBe(name);
      expect(pod.securityContext?.runAsNonRoot).toBe(true);
      const c = pod.containers[0];
      expect(c.livenessProbe?.httpGet?.path).toBe('/healthz');
      expect(c.readinessProbe?.httpGet?.path).toBe('/readyz');
      expect(c.resources?.requests?.cpu).toBeDefined();
      expect(c.resources?.limits?.memory).toBeDefined();
      expect(c.securityContext?.allowPrivilegeEscalation).toBe(false);
    }
    const ctrl = await apps.readNamespacedDeployment({ name: 'plugflow-controller', namespace: 'plugflow' });
    const gate = ctrl.spec!.template.spec!.containers[0].env!.find((e) => e.name === 'WORKFLOW_EXECUTOR_PLUGINS');
    expect(gate?.value).toBe('false');
    const svc = await core.readNamespacedService({ name: 'plugflow-server', namespace: 'plugflow' });
    expect(svc.spec?.ports?.map((p) => p.port)).toEqual([2746]);
    // /metrics names tenants: its own port, its own Service, scrape annotations; not on the API Service.
    const metricsSvc = await core.readNamespacedService({ name: 'plugflow-server-metrics', namespace: 'plugflow' });
    expect(metricsSvc.spec?.ports?.map((p) => [p.port, p.targetPort])).toEqual([[9091, 'metrics']]);
    const server = (await apps.readNamespacedDeployment({ name: 'plugflow-server', namespace: 'plugflow' })).spec!.template;
    expect(server.metadata?.annotations).toMatchObject({
      'prometheus.io/scrape': 'true',
      'prometheus.io/port': '9091',
      'prometheus.io/path': '/metrics',
    });
    expect(server.spec!.containers[0].args).toContain('--metrics-port=9091');
    expect(server.spec!.containers[0].args).toContain('--auth-mode=client');
  });

  it('applying it a second time changes nothing and fails nothing', async () => {
    await applyAndWait(adminKubeConfig(), readManifests(join(REPO_ROOT, 'manifests', 'install.yaml')));
  });

  it('controller: exactly the rights the controller code uses, in any namespace', async () => {
    const token = await serviceAccountToken('plugflow', 'plugflow-controller');
    expect(await rulesOf(token, workNs)).toEqual({
      // /metrics: a scraper's token is checked with the API server (src/kube/request-authorizer.ts).
      'authentication.k8s.io/tokenreviews': ['create'],
      'authorization.k8s.io/subjectaccessreviews': ['create'],
      '/configmaps': ['create', 'get', 'list', 'update', 'watch'],
      '/events': ['create'],
      '/namespaces': ['get', 'list', 'watch'],
      // A node lost under running steps (src/controller/lost-nodes.ts).
      '/nodes': ['list'],
      // volumeClaimTemplates and podDisruptionBudget: made before the pods, removed per their GC.
      '/persistentvolumeclaims': ['create', 'delete'],
      'policy/poddisruptionbudgets': ['create', 'delete'],
      '/pods': ['create', 'delete', 'get', 'list', 'watch'],
      // The log of a resource step's manifest pod (manifestFrom.artifact).
      '/pods/log': ['get'],
      // No impersonate here: a namespace grants it with its own RoleBinding (below).
      '/serviceaccounts': ['get'],
      'plugflow.io/clusterworkflowtemplates': ['get', 'list', 'watch'],
      'plugflow.io/cronworkflows': ['get', 'list', 'watch'],
      'plugflow.io/cronworkflows/finalizers': ['update'],
      'plugflow.io/cronworkflows/status': ['update'],
      // delete: ttlStrategy removes finished workflows; create: the runs of CronWorkflows.
      'plugflow.io/workflows': ['create', 'delete', 'get', 'list', 'patch', 'watch'],
      'plugflow.io/workflows/finalizers': ['update'],
      'plugflow.io/workflows/status': ['patch', 'update'],
      'plugflow.io/workflowtasksets': ['create', 'get', 'list', 'patch', 'watch'],
      'plugflow.io/workflowtasksets/status': ['patch'],
      'plugflow.io/workflowtemplates': ['get', 'list', 'watch'],
    });
    const sa = 'system:serviceaccount:plugflow:plugflow-controller';
    // Acting as a namespace's accounts (resource templates) only where the namespace granted it:
    // never kube-system's, whose accounts would make the controller's token cluster-admin.
    expect(await can(sa, 'impersonate', 'serviceaccounts', 'kube-system')).toBe(false);
    expect(await can(sa, 'impersonate', 'serviceaccounts', workNs)).toBe(false);
    await applyAndWait(adminKubeConfig(), [impersonationBinding(workNs) as KubernetesObject]);
    expect(await eventually(async () => ((await can(sa, 'impersonate', 'serviceaccounts', workNs)) ? true : undefined), 'the grant')).toBe(
      true,
    );
    expect(await can(sa, 'impersonate', 'serviceaccounts', 'kube-system')).toBe(false);
    expect(await can(sa, 'create', 'leases', 'plugflow', 'coordination.k8s.io')).toBe(true);
    // --sharding: the replicas' member Leases are listed, and a clean stop deletes its own.
    expect(await can(sa, 'list', 'leases', 'plugflow', 'coordination.k8s.io')).toBe(true);
    expect(await can(sa, 'delete', 'leases', 'plugflow', 'coordination.k8s.io')).toBe(true);
    expect(await can(sa, 'create', 'leases', workNs, 'coordination.k8s.io')).toBe(false);
    // The kubelets' Leases are read, never written.
    expect(await can(sa, 'list', 'leases', 'kube-node-lease', 'coordination.k8s.io')).toBe(true);
    expect(await can(sa, 'update', 'leases', 'kube-node-lease', 'coordination.k8s.io')).toBe(false);
    expect(await can(sa, 'get', 'secrets', workNs)).toBe(false);
    expect(await can(sa, 'create', 'pods', workNs, '', 'exec')).toBe(false);
    expect(await can(sa, 'delete', 'workflows', workNs, 'plugflow.io')).toBe(true);
    expect(await can(sa, 'delete', 'workflowtemplates', workNs, 'plugflow.io')).toBe(false);
  });

  it('server: the binding cache, binding events and reading a clashing workflow only; workflow writing is a separate role the install does not bind', async () => {
    const token = await serviceAccountToken('plugflow', 'plugflow-server');
    expect(await rulesOf(token, workNs)).toEqual({
      '/events': ['create', 'patch'],
      // Which stores artifacts may be downloaded from (src/operations/artifact-trust.ts): that one name only.
      '/configmaps#artifact-repositories': ['get'],
      'plugflow.io/workfloweventbindings': ['list', 'watch'],
      // Whether a workflow an event's name clashes with is that event's (src/server/dispatch.ts).
      'plugflow.io/workflows': ['get'],
    });
    expect(await can('system:serviceaccount:plugflow:plugflow-server', 'list', 'workflows', workNs, 'plugflow.io')).toBe(false);
    const sa = 'system:serviceaccount:plugflow:plugflow-server';
    expect(await can(sa, 'create', 'workflows', workNs, 'plugflow.io')).toBe(false);
    expect(await can(sa, 'get', 'workflowtemplates', workNs, 'plugflow.io')).toBe(false);
    const role = await adminKubeConfig().makeApiClient(RbacAuthorizationV1Api).readClusterRole({ name: 'plugflow-server-mode' });
    expect(role.rules?.map((r) => [r.resources, r.verbs])).toEqual([
      [['workflows'], ['create', 'get', 'list', 'delete', 'patch']],
      [['workflows/status'], ['update']],
      [['pods'], ['get', 'delete']],
      [['workflowtemplates'], ['get', 'list', 'create', 'update', 'delete']],
      [['cronworkflows'], ['create', 'get', 'list', 'delete', 'patch']],
      [['clusterworkflowtemplates'], ['get']],
    ]);
    expect(await can(sa, 'delete', 'pods', workNs)).toBe(false);
    expect(await can(sa, 'get', 'secrets', workNs)).toBe(false);
    expect(await can(sa, 'update', 'workflows', workNs, 'plugflow.io', 'status')).toBe(false);
  });

  it('server mode: manifests/server-mode/rolebinding.yaml gives the server workflow rights in that namespace only', async () => {
    const doc = readManifests(join(REPO_ROOT, 'manifests', 'server-mode', 'rolebinding.yaml'))[0] as { metadata: { namespace: string } };
    doc.metadata.namespace = workNs;
    await applyAndWait(adminKubeConfig(), [doc as never]);
    const token = await serviceAccountToken('plugflow', 'plugflow-server');
    expect(await rulesOf(token, workNs)).toEqual({
      '/events': ['create', 'patch'],
      '/configmaps#artifact-repositories': ['get'],
      'plugflow.io/clusterworkflowtemplates': ['get'],
      'plugflow.io/cronworkflows': ['create', 'delete', 'get', 'list', 'patch'],
      'plugflow.io/workfloweventbindings': ['list', 'watch'],
      'plugflow.io/workflows': ['create', 'delete', 'get', 'list', 'patch'],
      'plugflow.io/workflows/status': ['update'],
      'plugflow.io/workflowtemplates': ['create', 'delete', 'get', 'list', 'update'],
      '/pods': ['delete', 'get'],
    });
    const sa = 'system:serviceaccount:plugflow:plugflow-server';
    expect(await can(sa, 'create', 'workflows', workNs, 'plugflow.io')).toBe(true);
    expect(await can(sa, 'create', 'workflows', 'default', 'plugflow.io')).toBe(false);
  });

  it('agent: its TaskSet and the status subresource, no secrets, nothing else', async () => {
    const core = adminKubeConfig().makeApiClient(CoreV1Api);
    await core.createNamespacedServiceAccount({ namespace: workNs, body: { metadata: { name: 'wf-runner' } } });
    await adminKubeConfig()
      .makeApiClient(RbacAuthorizationV1Api)
      .createNamespacedRoleBinding({
        namespace: workNs,
        body: {
          metadata: { name: 'plugflow-agent' },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'plugflow-agent' },
          subjects: [{ kind: 'ServiceAccount', name: 'wf-runner', namespace: workNs }],
        },
      });
    const token = await serviceAccountToken(workNs, 'wf-runner');
    expect(await rulesOf(token, workNs)).toEqual({
      'plugflow.io/workflowtasksets': ['get', 'list', 'watch'],
      'plugflow.io/workflowtasksets/status': ['patch'],
    });
    const sa = `system:serviceaccount:${workNs}:wf-runner`;
    expect(await can(sa, 'patch', 'workflowtasksets', workNs, 'plugflow.io', 'status')).toBe(true);
    expect(await can(sa, 'patch', 'workflowtasksets', workNs, 'plugflow.io')).toBe(false);
    expect(await can(sa, 'get', 'secrets', workNs)).toBe(false);
    expect(await can(sa, 'list', 'secrets', workNs)).toBe(false);
    // The binding is per namespace: the same account has nothing elsewhere.
    expect(await can(sa, 'watch', 'workflowtasksets', 'default', 'plugflow.io')).toBe(false);
  });

  it('the event-bus overlay: its NATS objects and Secrets pass the API server, and its patch gives the server the bus, the key, the login and nothing else', async () => {
    const client = await KubeClient.fromKubeConfig(adminKubeConfig());
    try {
      const type = (group: string, plural: string, kind: string) => ({ group, version: 'v1', plural, kind, namespaced: true });
      const kinds: Record<string, ReturnType<typeof type>> = {
        ConfigMap: type('', 'configmaps', 'ConfigMap'),
        Service: type('', 'services', 'Service'),
        StatefulSet: type('apps', 'statefulsets', 'StatefulSet'),
        NetworkPolicy: type('networking.k8s.io', 'networkpolicies', 'NetworkPolicy'),
        Secret: type('', 'secrets', 'Secret'),
      };
      const docs = [
        ...(parseAllDocuments(await busSecrets({ namespace: 'plugflow', replicas: 3, days: 30 })).map((d) => d.toJS()) as {
          kind: string;
        }[]),
        ...(readManifests(join(REPO_ROOT, 'manifests', 'event-bus', 'nats.yaml')) as { kind: string }[]),
      ];
      expect(docs.map((d) => d.kind)).toEqual(['Secret', 'Secret', 'Secret', 'ConfigMap', 'Service', 'NetworkPolicy', 'StatefulSet']);
      // Strict validation on a dry run: an unknown or misplaced field fails here.
      for (const d of docs) await client.create(kinds[d.kind]!, 'plugflow', d, { dryRun: true, fieldValidation: 'Strict' });
      const patch: unknown = parseYaml(readFileSync(join(REPO_ROOT, 'manifests', 'event-bus', 'server-patch.yaml'), 'utf8'));
      const patched = await client.patch<V1Deployment>(
        type('apps', 'deployments', 'Deployment'),
        'plugflow',
        'plugflow-server',
        patch,
        'application/strategic-merge-patch+json',
        { dryRun: true, fieldValidation: 'Strict' },
      );
      const spec = patched.spec!.template.spec!;
      const server = spec.containers.find((c) => c.name === 'server')!;
      expect(server.args).toEqual([
        'server',
        '--auth-mode=client',
        '--port=2746',
        '--metrics-port=9091',
        '--event-bus=nats://plugflow-nats-0.plugflow-nats:4222,nats://plugflow-nats-1.plugflow-nats:4222,nats://plugflow-nats-2.plugflow-nats:4222',
        '--event-bus-key-file=/etc/plugflow/event-bus/key',
        '--event-bus-user=plugflow-server',
        '--event-bus-password-file=/etc/plugflow/event-bus-auth/password',
        '--event-bus-ca-file=/etc/plugflow/event-bus-tls/ca.crt',
        '--event-bus-replicas=3',
      ]);
      // The base's mounts and probes stay; the key is added read-only.
      expect(server.volumeMounts).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ name: 'tmp', mountPath: '/tmp' }),
          expect.objectContaining({ name: 'event-bus-key', mountPath: '/etc/plugflow/event-bus', readOnly: true }),
        ]),
      );
      expect(server.readinessProbe?.httpGet?.path).toBe('/readyz');
      expect(spec.volumes?.find((v) => v.name === 'event-bus-key')?.secret?.secretName).toBe('plugflow-event-bus-key');
      expect(spec.volumes?.find((v) => v.name === 'event-bus-auth')?.secret?.secretName).toBe('plugflow-event-bus-auth');
      // Of the bus's TLS Secret the server mounts the CA's certificate alone, not the nodes' key.
      expect(spec.volumes?.find((v) => v.name === 'event-bus-tls')?.secret).toMatchObject({
        secretName: 'plugflow-nats-tls',
        items: [{ key: 'ca.crt', path: 'ca.crt' }],
      });
      // Each server flag of the patch is one `plugflow server` knows.
      const help = registeredServerFlags();
      for (const arg of server.args!.slice(1)) expect(help).toContain(arg.split('=')[0]);
    } finally {
      await client.close();
    }
  });
  it("the archive overlay: its PostgreSQL passes the API server, and its pod the namespace's restricted Pod Security level", async () => {
    const client = await KubeClient.fromKubeConfig(adminKubeConfig());
    try {
      const type = (group: string, version: string, plural: string, kind: string) => ({ group, version, plural, kind, namespaced: true });
      const kinds: Record<string, ReturnType<typeof type>> = {
        Service: type('', 'v1', 'services', 'Service'),
        StatefulSet: type('apps', 'v1', 'statefulsets', 'StatefulSet'),
      };
      const docs = readManifests(join(REPO_ROOT, 'manifests', 'archive', 'postgres.yaml')) as V1StatefulSet[];
      expect(docs.map((d) => d.kind)).toEqual(['Service', 'StatefulSet']);
      for (const d of docs) await client.create(kinds[d.kind!]!, 'plugflow', d, { dryRun: true, fieldValidation: 'Strict' });
      // The pod its StatefulSet makes, admitted where Pod Security enforces the restricted level.
      const set = docs[1]!;
      const restricted = `psa-restricted-${Date.now().toString(36)}`;
      const namespaces = { group: '', version: 'v1', plural: 'namespaces', kind: 'Namespace', namespaced: false };
      await client.create(namespaces, undefined, {
        metadata: { name: restricted, labels: { 'pod-security.kubernetes.io/enforce': 'restricted' } },
      });
      try {
        const pod = {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: 'plugflow-postgres-0', labels: set.spec!.template.metadata!.labels },
          // The claim the StatefulSet would make stands in as an emptyDir.
          spec: { ...set.spec!.template.spec!, volumes: [...(set.spec!.template.spec!.volumes ?? []), { name: 'data', emptyDir: {} }] },
        };
        await client.create(type('', 'v1', 'pods', 'Pod'), restricted, pod, { dryRun: true, fieldValidation: 'Strict' });
        // And the check is real: the same pod as root is refused there.
        const root = {
          ...pod,
          spec: { ...pod.spec, securityContext: { ...pod.spec!.securityContext, runAsNonRoot: false, runAsUser: 0 } },
        };
        await expect(client.create(type('', 'v1', 'pods', 'Pod'), restricted, root, { dryRun: true })).rejects.toThrow(
          /violates PodSecurity "restricted/,
        );
      } finally {
        await client.delete(namespaces, undefined, restricted);
      }
      const env = set.spec!.template.spec!.containers[0]!.env!;
      expect(env.find((e) => e.name === 'POSTGRES_PASSWORD')?.valueFrom?.secretKeyRef).toEqual({
        name: 'plugflow-postgres',
        key: 'password',
      });
      // The URL its comment tells people to store is the one the controller and server read.
      const text = readFileSync(join(REPO_ROOT, 'manifests', 'archive', 'postgres.yaml'), 'utf8');
      expect(text).toContain('create secret generic plugflow-archive');
      expect(text).toContain('@plugflow-postgres:5432/plugflow');
    } finally {
      await client.close();
    }
  });
});
