/**
 * What a template or workflow does around its run: memoization, synchronization locks and custom
 * metrics. Each record is declared once (record-declaration.ts): its type, CRD schema and
 * catalogue rules derive from the declaration below.
 */
import type { ConfigMapKeySelector } from './container.js';
import { arr, bool, num, obj, str } from './crd/schema-builders.js';
import { no, ok } from './field-rules.js';
import { field, record, ref, type RecordOf } from './record-declaration.js';

const LOCK_NAMESPACE_NOTE =
  "only the workflow's own namespace: a lock shared with another namespace would let its workflows stall this one's";

export const MEMOIZE_CACHE_CONFIG_MAP_RECORD = record('MemoizeCacheConfigMap', {
  name: field<string>(str(), ok("the cache ConfigMap in the workflow's namespace, created with the cache label if missing")).required(),
  /** The peer's ConfigMapKeySelector shape; not used (entries are keyed by `memoize.key`). */
  key: field<string>(str(), ok("required by the peer's selector shape and not used by it either: each entry is stored under memoize.key")),
  optional: field<boolean>(bool(), no('a cache ConfigMap is created when missing; optional has nothing to decide')),
});
export interface MemoizeCacheConfigMap extends RecordOf<typeof MEMOIZE_CACHE_CONFIG_MAP_RECORD.fields> {}

export const MEMOIZE_CACHE_RECORD = record('MemoizeCache', {
  configMap: ref<MemoizeCacheConfigMap>(MEMOIZE_CACHE_CONFIG_MAP_RECORD).required(),
});
export interface Cache extends RecordOf<typeof MEMOIZE_CACHE_RECORD.fields> {}

export const MEMOIZE_RECORD = record('Memoize', {
  key: field<string>(str(), ok('rendered with the inputs; must be a valid ConfigMap key')).required(),
  /** For example `180s`, `24h`; older entries are ignored. */
  maxAge: field<string>(str(), ok('a Go duration (180s, 24h); older entries are ignored; empty: entries never expire')),
  cache: ref<Cache>(MEMOIZE_CACHE_RECORD).required(),
});
export interface Memoize extends RecordOf<typeof MEMOIZE_RECORD.fields> {}

export const MUTEX_RECORD = record('Mutex', {
  name: field<string>(str(), ok('rendered with the workflow variables (and the inputs, at template level)')).required(),
  namespace: field<string>(str(), ok(LOCK_NAMESPACE_NOTE)),
  database: field<boolean>(
    bool(),
    no(
      "the peer's database-backed locks are shared by several controllers through a SQL database; plugflow's locks live in its one controller (leader-elected), so a plain mutex (name) already holds across the cluster: leave database out",
    ),
  ),
});
export interface Mutex extends RecordOf<typeof MUTEX_RECORD.fields> {}

export const SEMAPHORE_CONFIG_MAP_KEY_REF_RECORD = record('SemaphoreConfigMapKeyRef', {
  name: field<string>(str(), ok("the ConfigMap in the workflow's namespace holding the limit")),
  key: field<string>(
    str(),
    ok('its data key: a whole number of holders; changes are read live (a higher limit admits waiters at once)'),
  ).required(),
  optional: field<boolean>(bool(), no('a semaphore without its ConfigMap has no limit to obey; optional has nothing to decide')),
});

/** Fields not shown by the spec; a semaphore is a limit read from a ConfigMap key. */
export const SEMAPHORE_REF_RECORD = record('SemaphoreRef', {
  configMapKeyRef: ref<ConfigMapKeySelector>(SEMAPHORE_CONFIG_MAP_KEY_REF_RECORD),
  namespace: field<string>(str(), ok(LOCK_NAMESPACE_NOTE)),
  database: field<unknown>(
    obj({}, { open: true }),
    no(
      "the peer's database-backed semaphores take their limit from a SQL database shared by several controllers; plugflow's locks live in its one controller: give the limit in a ConfigMap key (configMapKeyRef) instead",
    ),
  ),
});
export interface SemaphoreRef extends RecordOf<typeof SEMAPHORE_REF_RECORD.fields> {}

/**
 * Locks a workflow (spec.synchronization) or a template holds while it runs. `mutexes` and
 * `semaphores` are the peer's later list forms; every lock named is taken at once or not at all.
 */
export const SYNCHRONIZATION_RECORD = record('Synchronization', {
  mutex: ref<Mutex>(MUTEX_RECORD, 'one', 'a lock one holder at a time holds: <namespace>/Mutex/<name>'),
  semaphore: ref<SemaphoreRef>(SEMAPHORE_REF_RECORD, 'one', 'a lock as many holders hold as its ConfigMap key says, read live'),
  mutexes: ref<Mutex[]>(MUTEX_RECORD, 'list', 'several mutexes, all taken at once'),
  semaphores: ref<SemaphoreRef[]>(SEMAPHORE_REF_RECORD, 'list', 'several semaphores, all taken at once'),
});
export interface Synchronization extends RecordOf<typeof SYNCHRONIZATION_RECORD.fields> {}

export const METRIC_LABEL_RECORD = record('MetricLabel', {
  key: field<string>(str()).required(),
  value: field<string>(str(), ok('rendered')).required(),
});
export interface MetricLabel extends RecordOf<typeof METRIC_LABEL_RECORD.fields> {}

export const METRIC_COUNTER_RECORD = record('MetricCounter', {
  value: field<string>(str(), ok('rendered; the number added')).required(),
});
export const METRIC_GAUGE_RECORD = record('MetricGauge', {
  value: field<string>(str(), ok('rendered; the number set')).required(),
  realtime: field<boolean>(bool(), ok('the value follows the running time ({{duration}}), read at each scrape')),
});
export const METRIC_HISTOGRAM_RECORD = record('MetricHistogram', {
  value: field<string>(str(), ok('rendered; the number observed')).required(),
  buckets: field<number[]>(arr(num()), ok('upper bounds, increasing')).required(),
});

export const VENDOR_P_RECORD = record('VendorP', {
  name: field<string>(str(), ok('a Prometheus metric name, served as given')).required(),
  help: field<string>(str(), ok('required')).required(),
  labels: ref<MetricLabel[]>(METRIC_LABEL_RECORD, 'list'),
  /** Condition for emitting. */
  when: field<string>(str(), ok('rendered and evaluated when the metric would be emitted; false: not emitted')),
  counter: ref<RecordOf<typeof METRIC_COUNTER_RECORD.fields>>(METRIC_COUNTER_RECORD),
  gauge: ref<RecordOf<typeof METRIC_GAUGE_RECORD.fields>>(METRIC_GAUGE_RECORD),
  histogram: ref<RecordOf<typeof METRIC_HISTOGRAM_RECORD.fields>>(METRIC_HISTOGRAM_RECORD),
});
export interface VendorP extends RecordOf<typeof VENDOR_P_RECORD.fields> {}

export const METRICS_RECORD = record('Metrics', {
  vendorP: ref<VendorP[]>(VENDOR_P_RECORD, 'list', 'the metrics to emit (the peer calls this list prometheus)').required(),
});
export interface Metrics extends RecordOf<typeof METRICS_RECORD.fields> {}
