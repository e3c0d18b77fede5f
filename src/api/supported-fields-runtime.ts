/**
 * The records of what a template or workflow does around its run in THE list of supported and
 * refused fields (supported-fields.ts, which spreads these into its records): memoization,
 * synchronization locks and custom metrics.
 */
import { no, ok, rec, type FieldRule } from './field-rules.js';
import type { RecordName } from './supported-fields.js';

export const RUNTIME_RECORDS = {
  Memoize: {
    key: ok('rendered with the inputs; must be a valid ConfigMap key'),
    maxAge: ok('a Go duration (180s, 24h); older entries are ignored; empty: entries never expire'),
    cache: rec('MemoizeCache'),
  },
  MemoizeCache: { configMap: rec('MemoizeCacheConfigMap') },
  MemoizeCacheConfigMap: {
    name: ok("the cache ConfigMap in the workflow's namespace, created with the cache label if missing"),
    key: ok("required by the peer's selector shape and not used by it either: each entry is stored under memoize.key"),
    optional: no('a cache ConfigMap is created when missing; optional has nothing to decide'),
  },
  Synchronization: {
    mutex: rec('Mutex', 'one', 'a lock one holder at a time holds: <namespace>/Mutex/<name>'),
    semaphore: rec('SemaphoreRef', 'one', 'a lock as many holders hold as its ConfigMap key says, read live'),
    mutexes: rec('Mutex', 'list', 'several mutexes, all taken at once'),
    semaphores: rec('SemaphoreRef', 'list', 'several semaphores, all taken at once'),
  },
  Mutex: {
    name: ok('rendered with the workflow variables (and the inputs, at template level)'),
    namespace: ok("only the workflow's own namespace: a lock shared with another namespace would let its workflows stall this one's"),
    database: no(
      "the peer's database-backed locks are shared by several controllers through a SQL database; plugflow's locks live in its one controller (leader-elected), so a plain mutex (name) already holds across the cluster: leave database out",
    ),
  },
  SemaphoreRef: {
    configMapKeyRef: rec('SemaphoreConfigMapKeyRef'),
    namespace: ok("only the workflow's own namespace: a lock shared with another namespace would let its workflows stall this one's"),
    database: no(
      "the peer's database-backed semaphores take their limit from a SQL database shared by several controllers; plugflow's locks live in its one controller: give the limit in a ConfigMap key (configMapKeyRef) instead",
    ),
  },
  SemaphoreConfigMapKeyRef: {
    name: ok("the ConfigMap in the workflow's namespace holding the limit"),
    key: ok('its data key: a whole number of holders; changes are read live (a higher limit admits waiters at once)'),
    optional: no('a semaphore without its ConfigMap has no limit to obey; optional has nothing to decide'),
  },
  Metrics: { vendorP: rec('VendorP', 'list', 'the metrics to emit (the peer calls this list prometheus)') },
  VendorP: {
    name: ok('a Prometheus metric name, served as given'),
    help: ok('required'),
    labels: rec('MetricLabel', 'list'),
    when: ok('rendered and evaluated when the metric would be emitted; false: not emitted'),
    counter: rec('MetricCounter'),
    gauge: rec('MetricGauge'),
    histogram: rec('MetricHistogram'),
  },
  MetricCounter: { value: ok('rendered; the number added') },
  MetricGauge: {
    value: ok('rendered; the number set'),
    realtime: ok('the value follows the running time ({{duration}}), read at each scrape'),
  },
  MetricHistogram: { value: ok('rendered; the number observed'), buckets: ok('upper bounds, increasing') },
  MetricLabel: { key: ok(), value: ok('rendered') },
} satisfies Partial<Record<RecordName, Record<string, FieldRule>>>;
