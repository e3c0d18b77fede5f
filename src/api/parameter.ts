/**
 * Parameters, arguments, inputs and outputs (spec document 001, "Parameters" and "Outputs").
 */
import type { ConfigMapKeySelector } from './container.js';
import type { Artifact } from './artifact.js';
import type { AnyString } from './values/scalars.js';

/** Empty-object shape: the value is supplied later (for example by resuming a suspend node). */
export type SuppliedValueFrom = Record<string, never>;

export interface ValueFrom {
  configMapKeyRef?: ConfigMapKeySelector;
  default?: AnyString;
  /** Selector evaluated against an event (event bindings). */
  event?: string;
  expression?: string;
  /** Against the resource object in resource templates. */
  jqFilter?: string;
  /** Resource templates. */
  jsonPath?: string;
  /** Reference to a step or DAG task output. */
  parameter?: string;
  /** Path in the container (container templates). */
  path?: string;
  supplied?: SuppliedValueFrom;
}

export interface Parameter {
  name: string;
  default?: AnyString;
  description?: AnyString;
  /** Allowed values. */
  enum?: AnyString[];
  /** Exports an output parameter to global scope. */
  globalName?: string;
  value?: AnyString;
  valueFrom?: ValueFrom;
}

export type Artifacts = Artifact[];

export interface Arguments {
  artifacts?: Artifacts;
  parameters?: Parameter[];
}

/** Template inputs (fields not shown by the spec; the same pair as Arguments). */
export interface Inputs {
  artifacts?: Artifacts;
  parameters?: Parameter[];
}

export interface Outputs {
  artifacts?: Artifacts;
  /** Exit code of a script/container template, as a string. */
  exitCode?: string;
  parameters?: Parameter[];
  /** Stdout of a script template (or the body of an http template). */
  result?: string;
}
