/**
 * The limits of ConfigMap semaphores (`synchronization.semaphores[].configMapKeyRef`): a key of a
 * ConfigMap whose value is how many holders the semaphore admits. Create, read, change and
 * remove one, with the rights of whoever asks (get/create/patch on configmaps) — the peer's
 * `/api/v1/sync/{namespace}` routes and `argo sync`. The controller reads the limit when it hands
 * the lock out, so a change applies to the next waiter.
 *
 * Only ConfigMap limits: plugflow keeps no semaphore limits in a database (the peer's DATABASE
 * type is refused, saying so).
 */
import { isJsonObject } from '../api/index.js';
import type { KubeClient } from '../kube/client.js';
import { isNotFound } from '../kube/errors.js';
import { CONFIGMAPS } from '../kube/resource.js';
import { OperationRefused } from './errors.js';

export interface SyncLimit {
  namespace: string;
  cmName: string;
  key: string;
  limit: number;
  type: 'CONFIGMAP';
}

/** A ConfigMap key (the API server's rule for data keys). */
const KEY = /^[-._a-zA-Z0-9]{1,253}$/;

interface ConfigMap {
  metadata?: { name?: string; resourceVersion?: string };
  data?: Record<string, string>;
}

/** The request's fields, checked: cmName, key, limit (when `needLimit`), type CONFIGMAP (0, absent or "CONFIGMAP"). */
export function syncRequest(given: unknown, needLimit: boolean): { cmName: string; key: string; limit?: number } {
  const o = isJsonObject(given) ? given : {};
  const type = o.type;
  if (!(type === undefined || type === null || type === 0 || type === '0' || type === '' || type === 'CONFIGMAP' || type === 'CONFIG_MAP'))
    throw new OperationRefused(
      'invalid',
      `type ${JSON.stringify(type)} is not supported: plugflow keeps semaphore limits in ConfigMaps only (type CONFIGMAP)`,
    );
  if (typeof o.cmName !== 'string' || o.cmName === '')
    throw new OperationRefused('invalid', 'cmName is required: the ConfigMap that holds the limit');
  if (typeof o.key !== 'string' || !KEY.test(o.key))
    throw new OperationRefused('invalid', `key ${JSON.stringify(o.key)} is not a ConfigMap key (letters, digits, '-', '_', '.')`);
  if (!needLimit) return { cmName: o.cmName, key: o.key };
  const limit = typeof o.limit === 'string' && /^\d+$/.test(o.limit) ? Number(o.limit) : o.limit;
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1)
    throw new OperationRefused('invalid', `limit must be a whole number of at least 1, got ${JSON.stringify(o.limit)}`);
  return { cmName: o.cmName, key: o.key, limit };
}

export class SyncLimits {
  constructor(
    private readonly kube: KubeClient,
    private readonly namespace: string,
  ) {}

  private answer(cmName: string, key: string, value: string | undefined): SyncLimit {
    if (value === undefined) throw new OperationRefused('not-found', `ConfigMap ${this.namespace}/${cmName} has no key ${key}`);
    const limit = Number(value);
    if (!Number.isInteger(limit))
      throw new OperationRefused(
        'invalid',
        `ConfigMap ${this.namespace}/${cmName} key ${key} holds ${JSON.stringify(value)}, not a whole number`,
      );
    return { namespace: this.namespace, cmName, key, limit, type: 'CONFIGMAP' };
  }

  private async read(cmName: string): Promise<ConfigMap | undefined> {
    try {
      return await this.kube.get<ConfigMap>(CONFIGMAPS, this.namespace, cmName);
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  async get(cmName: string, key: string): Promise<SyncLimit> {
    const cm = await this.read(cmName);
    if (!cm) throw new OperationRefused('not-found', `ConfigMap ${this.namespace}/${cmName} does not exist`);
    return this.answer(cmName, key, cm.data?.[key]);
  }

  /** A new limit: the ConfigMap is created when missing; a key already there is refused (update it instead). */
  async create(cmName: string, key: string, limit: number): Promise<SyncLimit> {
    const cm = await this.read(cmName);
    if (!cm) {
      await this.kube.create(CONFIGMAPS, this.namespace, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: cmName },
        data: { [key]: String(limit) },
      });
      return this.answer(cmName, key, String(limit));
    }
    if (cm.data?.[key] !== undefined)
      throw new OperationRefused(
        'exists',
        `ConfigMap ${this.namespace}/${cmName} already has key ${key}: change it with PUT /api/v1/sync/${this.namespace}/${key}`,
      );
    await this.kube.mergePatch(CONFIGMAPS, this.namespace, cmName, {
      metadata: { resourceVersion: cm.metadata?.resourceVersion },
      data: { [key]: String(limit) },
    });
    return this.answer(cmName, key, String(limit));
  }

  async update(cmName: string, key: string, limit: number): Promise<SyncLimit> {
    const cm = await this.read(cmName);
    if (!cm) throw new OperationRefused('not-found', `ConfigMap ${this.namespace}/${cmName} does not exist`);
    if (cm.data?.[key] === undefined) throw new OperationRefused('not-found', `ConfigMap ${this.namespace}/${cmName} has no key ${key}`);
    await this.kube.mergePatch(CONFIGMAPS, this.namespace, cmName, {
      metadata: { resourceVersion: cm.metadata?.resourceVersion },
      data: { [key]: String(limit) },
    });
    return this.answer(cmName, key, String(limit));
  }

  async delete(cmName: string, key: string): Promise<void> {
    const cm = await this.read(cmName);
    if (!cm || cm.data?.[key] === undefined) return;
    await this.kube.mergePatch(CONFIGMAPS, this.namespace, cmName, {
      metadata: { resourceVersion: cm.metadata?.resourceVersion },
      data: { [key]: null },
    });
  }
}
