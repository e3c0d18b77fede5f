/**
 * Prometheus metrics of the agent, on a registry of its own (one agent per process, but tests run
 * several in one process, so nothing goes on the global registry).
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';

export class AgentMetrics {
  readonly registry = new Registry();
  readonly calls = new Counter({
    name: 'plugflow_agent_plugin_calls_total',
    help: 'Plugin template.execute calls by plugin and outcome (reply, skip, notImplemented, transient, fatal).',
    labelNames: ['plugin', 'outcome'] as const,
    registers: [this.registry],
  });
  readonly callSeconds = new Histogram({
    name: 'plugflow_agent_plugin_call_seconds',
    help: 'Duration of plugin template.execute calls.',
    labelNames: ['plugin'] as const,
    buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30],
    registers: [this.registry],
  });
  readonly tasksRunning = new Gauge({
    name: 'plugflow_agent_tasks_running',
    help: 'Tasks being run (calling, waiting for a requeue or a backoff).',
    registers: [this.registry],
  });
  readonly tasksFinished = new Counter({
    name: 'plugflow_agent_tasks_finished_total',
    help: 'Tasks that reached a result, by phase.',
    labelNames: ['phase'] as const,
    registers: [this.registry],
  });
  readonly statusPatches = new Counter({
    name: 'plugflow_agent_status_patches_total',
    help: 'Merge patches of the TaskSet status, by result (ok, error).',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });
}
