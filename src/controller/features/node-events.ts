/**
 * The peer's node Events as a controller feature (`--node-events`; off by default, since every
 * Event is an API write): what the stored status changed (src/engine/node-events.ts decides) is
 * recorded on the workflow, annotated with the node's name and type as the peer does.
 */
import { LABEL_PREFIX } from '../../api/index.js';
import { nodeEvents } from '../../engine/index.js';
import type { EventRecorder } from '../../kube/event-recorder.js';
import { WORKFLOWS } from '../../kube/resource.js';
import type { WorkflowFeature } from './feature.js';

export const ANNOTATION_NODE_NAME = `${LABEL_PREFIX}node-name`;
export const ANNOTATION_NODE_TYPE = `${LABEL_PREFIX}node-type`;

export function nodeEventsFeature(events: EventRecorder): WorkflowFeature {
  return {
    name: 'node-events',
    stored: ({ workflow, run, before }) => {
      for (const e of nodeEvents(before, run.status))
        events.record(workflow, e.type, e.reason, e.message, WORKFLOWS, {
          [ANNOTATION_NODE_NAME]: e.nodeName,
          [ANNOTATION_NODE_TYPE]: e.nodeType,
        });
    },
  };
}
