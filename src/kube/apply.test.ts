/**
 * Applying manifests through the one client: discovery picks each kind's resource (and reads a
 * group version again when a kind appeared since), objects are server-side applied as raw JSON
 * (no key of a CRD schema lost in a typed-model round trip), namespaced objects without a
 * namespace land in the context's namespace, and a refusal names the object.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyAndWait, applyObjects, parseManifests } from './apply.js';
import { startApiStandIn, statusReply, type ApiStandIn } from './testing/api-stand-in.js';

let api: ApiStandIn;
let crdEstablished = false;
let widgetsServed = false;

beforeAll(async () => {
  api = await startApiStandIn((req) => {
    if (req.method === 'GET' && req.path === '/api/v1') {
      return {
        body: {
          resources: [
            { name: 'configmaps', kind: 'ConfigMap', namespaced: true },
            { name: 'namespaces', kind: 'Namespace', namespaced: false },
            { name: 'pods/log', kind: 'Pod', namespaced: true },
          ],
        },
      };
    }
    if (req.method === 'GET' && req.path === '/apis/apiextensions.k8s.io/v1') {
      return { body: { resources: [{ name: 'customresourcedefinitions', kind: 'CustomResourceDefinition', namespaced: false }] } };
    }
    if (req.method === 'GET' && req.path === '/apis/example.com/v1') {
      return {
        body: {
          resources: widgetsServed
            ? [{ name: 'widgets', kind: 'Widget', namespaced: true }]
            : [{ name: 'gadgets', kind: 'Gadget', namespaced: true }],
        },
      };
    }
    if (req.method === 'GET' && req.path.startsWith('/apis/apiextensions.k8s.io/v1/customresourcedefinitions/')) {
      const established = crdEstablished;
      crdEstablished = true; // established on the second look
      return { body: { status: { conditions: [{ type: 'Established', status: established ? 'True' : 'False' }] } } };
    }
    if (req.method === 'PATCH' && req.path.endsWith('/configmaps/refused'))
      return statusReply(422, 'Invalid', 'ConfigMap "refused" is invalid: data: Too long');
    // Applying the gadget "installs" widgets, as applying a CRD does.
    if (req.method === 'PATCH' && req.path.includes('/gadgets/')) widgetsServed = true;
    if (req.method === 'PATCH') return { body: req.body };
    return statusReply(404, 'NotFound', 'not found');
  });
  api.kubeConfig.contexts[0] = { ...api.kubeConfig.contexts[0]!, namespace: 'team' };
});
afterAll(() => api.close());

describe('applyObjects', () => {
  it('server-side applies each object at its discovered path, as raw JSON, forcing ownership', async () => {
    const crd = parseManifests(`
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  versions:
    - name: v1
      schema: {openAPIV3Schema: {type: object, properties: {size: {x-kubernetes-int-or-string: true}}}}
---
apiVersion: v1
kind: Namespace
metadata: {name: team}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
data: {a: "1"}
`);
    api.requests.length = 0;
    await applyAndWait(api.kubeConfig, crd);
    const patches = api.requests.filter((r) => r.method === 'PATCH');
    expect(patches.map((r) => r.path)).toEqual([
      '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com',
      '/api/v1/namespaces/team',
      '/api/v1/namespaces/team/configmaps/settings',
    ]);
    for (const p of patches) {
      expect(Object.fromEntries(p.query)).toEqual({ fieldManager: 'plugflow', force: 'true' });
      expect(p.headers['content-type']).toBe('application/apply-patch+yaml');
    }
    expect(JSON.stringify(patches[0]!.body)).toContain('"x-kubernetes-int-or-string":true');
    expect(patches[2]!.body).toMatchObject({ metadata: { name: 'settings', namespace: 'team' } });
    // The CRD was polled until Established.
    expect(api.requests.filter((r) => r.method === 'GET' && r.path.endsWith('/widgets.example.com'))).toHaveLength(2);
  });

  it('reads a group version again when a kind appeared since (a CRD applied a moment ago)', async () => {
    const gadget = { apiVersion: 'example.com/v1', kind: 'Gadget', metadata: { name: 'g' } };
    const widget = { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w', namespace: 'ns' } };
    widgetsServed = false;
    api.requests.length = 0;
    await applyObjects(api.kubeConfig, [gadget, widget]);
    expect(api.requests.filter((r) => r.method === 'PATCH').map((r) => r.path)).toEqual([
      '/apis/example.com/v1/namespaces/team/gadgets/g',
      '/apis/example.com/v1/namespaces/ns/widgets/w',
    ]);
    expect(api.requests.filter((r) => r.path === '/apis/example.com/v1')).toHaveLength(2);
    // A kind still missing after the second look is an error naming it.
    await expect(applyObjects(api.kubeConfig, [{ apiVersion: 'example.com/v1', kind: 'Gizmo', metadata: { name: 'z' } }])).rejects.toThrow(
      /applying Gizmo z: the API server serves no kind Gizmo in example.com\/v1 \(is its CustomResourceDefinition installed\?\)/,
    );
  });

  it("names the object and the API server's reason when a write is refused", async () => {
    await expect(
      applyObjects(api.kubeConfig, [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'refused', namespace: 'x' } }]),
    ).rejects.toThrow(
      'applying ConfigMap x/refused: PATCH /api/v1/namespaces/x/configmaps/refused: 422 Invalid: ConfigMap "refused" is invalid: data: Too long',
    );
  });
});
