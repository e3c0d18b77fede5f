/**
 * The workflow transitions users watch for, logged and recorded as Events on the workflow: it
 * started (left Pending), and it finished (with its phase and message).
 */
import { FINAL_WORKFLOW_PHASES, type Workflow, type WorkflowPhase } from '../api/index.js';
import type { EventRecorder } from '../kube/event-recorder.js';
import type { Logger } from '../log/logger.js';

export function announcePhase(
  out: { log: Logger; events: EventRecorder },
  wf: Workflow,
  before: WorkflowPhase,
  phase: WorkflowPhase,
  message: string | undefined,
): void {
  const key = `${wf.metadata?.namespace}/${wf.metadata?.name}`;
  if (FINAL_WORKFLOW_PHASES.includes(phase)) {
    const type = phase === 'Succeeded' ? 'Normal' : 'Warning';
    out.log.info('workflow finished', { workflow: key, phase, message });
    out.events.record(
      wf,
      type,
      `Workflow${phase}`,
      message ? `Workflow ${phase.toLowerCase()}: ${message}` : `Workflow ${phase.toLowerCase()}`,
    );
  } else if (phase === 'Running' && (before === '' || before === 'Pending')) {
    out.log.info('workflow started', { workflow: key });
    out.events.record(wf, 'Normal', 'WorkflowRunning', 'Workflow started');
  }
}
