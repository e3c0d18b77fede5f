/**
 * Artifact driver plugins at validation: every `plugin` location a workflow writes must name a
 * driver the controller runs (its PLUGFLOW_ARTIFACT_DRIVERS), so a workflow naming another is
 * refused when it starts, naming the field — not half-way, when a step's pod is built. A
 * key-only `plugin: {key}` (the repository names the driver) is checked when its pod is planned.
 */
import type { Artifact, Template, WorkflowSpec } from '../api/index.js';

export function checkArtifactDrivers(
  spec: WorkflowSpec,
  registered: readonly string[],
  add: (field: string, detail: string) => void,
): void {
  const check = (a: Pick<Artifact, 'plugin'> | undefined, field: string) => {
    const name = a?.plugin?.name;
    if (name && !registered.includes(name)) add(`${field}.plugin.name`, unregisteredDetail(name, registered));
  };
  const list = (arts: readonly Artifact[] | undefined, field: string) => (arts ?? []).forEach((a) => check(a, `${field}[${a.name}]`));
  list(spec.arguments?.artifacts, 'spec.arguments.artifacts');
  for (const t of spec.templates ?? []) {
    const at = `spec.templates[${t.name}]`;
    list(t.inputs?.artifacts, `${at}.inputs.artifacts`);
    list(t.outputs?.artifacts, `${at}.outputs.artifacts`);
    check(t.archiveLocation, `${at}.archiveLocation`);
    for (const [field, step] of callsOf(t)) list(step.arguments?.artifacts, `${at}.${field}.arguments.artifacts`);
  }
}

/** The steps and DAG tasks of a template with their fields (`steps[0][a]`, `dag.tasks[b]`). */
function callsOf(t: Template): Array<[string, { arguments?: { artifacts?: Artifact[] } }]> {
  const out: Array<[string, { arguments?: { artifacts?: Artifact[] } }]> = [];
  (t.steps ?? []).forEach((group, i) => (Array.isArray(group) ? group : []).forEach((s) => out.push([`steps[${i}][${s.name}]`, s])));
  for (const task of t.dag?.tasks ?? []) out.push([`dag.tasks[${task.name}]`, task]);
  return out;
}

/** Why a driver name is refused: the drivers the controller has, and where an operator adds one. */
export function unregisteredDetail(name: string, registered: readonly string[]): string {
  const have = registered.length ? `it has ${registered.map((n) => `"${n}"`).join(', ')}` : 'it has none';
  return `names artifact driver "${name}", which the controller does not run (${have}; an operator registers drivers in the controller's PLUGFLOW_ARTIFACT_DRIVERS)`;
}
