/**
 * The executor plugins a workflow namespace gets, with the caller's rights:
 *
 *   GET /api/v1/executor-plugins/{namespace}
 *       → {workflowNamespace, installNamespace, plugins: [{namespace, configMap, plugin, state, reason?, instead?, container}], unreadable: [{namespace, message}]}
 *
 * `state` is used, shadowed (another plugin of the name wins), left-out (it clashes with another
 * plugin of the agent pod) or malformed, each with the reason the controller would log. The
 * ConfigMaps of the namespace and of the installation namespace are listed with the caller's
 * token; a namespace the caller may not list is reported under `unreadable` instead of failing
 * the whole answer.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { CONFIGMAP_TYPE_EXECUTOR_PLUGIN, LABEL_CONFIGMAP_TYPE } from '../../api/index.js';
import type { KubeClient } from '../../kube/client.js';
import { CONFIGMAPS } from '../../kube/resource.js';
import { errorMessage } from '../../log/error-message.js';
import { pluginInventory, type ConfigMapLike } from '../../plugins/index.js';

type Req = FastifyRequest<{ Params: { namespace: string } }>;

export function executorPluginRoutes(app: FastifyInstance, kube: KubeClient, installNamespace: string): void {
  app.get('/api/v1/executor-plugins/:namespace', async (req: Req) => {
    const { namespace } = req.params;
    const asCaller = kube.as(req.caller.identity);
    const namespaces = namespace === installNamespace ? [namespace] : [namespace, installNamespace];
    const configMaps: ConfigMapLike[] = [];
    const unreadable: { namespace: string; message: string }[] = [];
    await Promise.all(
      namespaces.map(async (ns) => {
        try {
          const list = await asCaller.list<ConfigMapLike>(CONFIGMAPS, {
            namespace: ns,
            labelSelector: `${LABEL_CONFIGMAP_TYPE}=${CONFIGMAP_TYPE_EXECUTOR_PLUGIN}`,
          });
          configMaps.push(...list.items);
        } catch (err) {
          if (ns === namespace) throw err; // the namespace asked about: an ordinary refusal
          unreadable.push({ namespace: ns, message: errorMessage(err) });
        }
      }),
    );
    return { ...pluginInventory(configMaps, { workflowNamespace: namespace, installNamespace }), unreadable };
  });
}
